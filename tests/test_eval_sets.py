"""The fill-mask evaluation sets (assets/eval/*.tsv) and how core.train.evaluate scores them."""
import pytest

from core.fillmask.examples import CHARS_CHECK_FILE, HELDOUT_FILE
from core.fillmask.masks import mask_runs
from core.train.evaluate import DEMO_FILE, EVERYDAY_CHECK_FILE, WORDS_CHECK_FILE, demo_set, evaluate_demo_set

MASK = "[MASK]"


@pytest.mark.parametrize("path", [DEMO_FILE, WORDS_CHECK_FILE, EVERYDAY_CHECK_FILE, CHARS_CHECK_FILE, HELDOUT_FILE],
                         ids=lambda p: p.name)
def test_every_answer_fits_its_masks(path):
    rows = demo_set(path)
    assert len(rows) >= 20
    for sentence, answers in rows:
        runs = mask_runs(sentence, MASK)
        # one mask (a character answer) or exactly one run of masks (whole-word answers of its length)
        width = runs[0][1] if runs else 1
        assert sentence.count(MASK) == width and len(runs) <= 1, sentence
        assert answers and all(len(a) == width for a in answers), sentence


@pytest.mark.parametrize("path", [WORDS_CHECK_FILE, EVERYDAY_CHECK_FILE], ids=lambda p: p.name)
def test_the_check_sets_are_new_whole_word_sentences(path):
    check = demo_set(path)
    earlier = ({s for s, _ in demo_set(DEMO_FILE)} | {s for s, _ in demo_set(WORDS_CHECK_FILE)}) - {s for s, _ in check}
    assert not earlier & {s for s, _ in check}
    assert all(mask_runs(s, MASK) for s, _ in check)


def test_the_sureness_sets_are_new_sentences():
    """The character check set and the held-out set share no sentence with each other or an earlier set."""
    earlier = {s for path in (DEMO_FILE, WORDS_CHECK_FILE, EVERYDAY_CHECK_FILE) for s, _ in demo_set(path)}
    chars, heldout = ({s for s, _ in demo_set(path)} for path in (CHARS_CHECK_FILE, HELDOUT_FILE))
    assert not (chars & heldout) and not (earlier & (chars | heldout))
    assert all(s.count(MASK) == 1 for s in chars)


@pytest.mark.realmodel
def test_the_check_set_is_scored_with_whole_words_of_the_embedded_model():
    report = evaluate_demo_set(path=WORDS_CHECK_FILE)
    assert report["sentences"] == len(demo_set(WORDS_CHECK_FILE))
    for row in report["rows"]:
        assert len(row["top"]) == 3 and all(len(word) == 2 for word in row["top"])
        assert row["hit"] == any(word in row["answers"] for word in row["top"])
    assert report["hits"] == sum(r["hit"] for r in report["rows"])
