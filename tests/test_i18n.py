"""The two translation tables agree, and every literal t("...") key used in the UI exists."""
from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest

from ui import i18n

ROOT = Path(__file__).resolve().parent.parent
I18N = ROOT / "assets" / "i18n"
# t("key") / t('key', ...) as a whole word (not st.text(, not list(); a literal that is only the
# start of a computed key (t("a." + x)) is skipped: the literal must be followed by "," or ")".
T_CALL = re.compile(r"""(?<![\w.])t\(\s*(["'])([^"'\\{}]+)\1\s*[,)]""")


def load(lang: str) -> dict[str, str]:
    return json.loads((I18N / f"{lang}.json").read_text(encoding="utf-8"))


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def ui_sources() -> list[Path]:
    files = [ROOT / "app.py"]
    for folder in ("app_pages", "ui"):
        files += sorted((ROOT / folder).rglob("*.py"))
    return [f for f in files if f.exists()]


def test_same_keys():
    zh, en = load("zh"), load("en")
    assert sorted(set(zh) - set(en)) == [], "keys missing in en.json"
    assert sorted(set(en) - set(zh)) == [], "keys missing in zh.json"


def test_values_are_nonempty_strings():
    for lang in ("zh", "en"):
        for key, value in load(lang).items():
            assert isinstance(value, str) and value.strip(), f"{lang}.json: {key} is empty"


def test_same_placeholders():
    zh, en = load("zh"), load("en")
    bad = {k: (sorted(placeholders(zh[k])), sorted(placeholders(en[k])))
           for k in zh if k in en and placeholders(zh[k]) != placeholders(en[k])}
    assert bad == {}


def test_error_catalogue_is_bilingual_with_the_same_parameters():
    from core.guard.errors import MESSAGES

    for code, templates in MESSAGES.items():
        assert set(templates) == {"zh", "en"}, code
        assert placeholders(templates["zh"]) == placeholders(templates["en"]), code
        assert re.search(r"[\u4e00-\u9fff]", templates["zh"]), code  # the Chinese text is Chinese


def test_core_errors_carry_parameters_not_english_sentences():
    """A Chinese message must not embed an English sentence: details only where the text is not ours
    (a loader's or a guard's exception, load_failed/bad_mix)."""
    pattern = re.compile(r"LabError\(\s*\"(\w+)\"[^)]*\bdetail=")
    codes = {m.group(1) for f in (ROOT / "core").rglob("*.py") for m in pattern.finditer(f.read_text(encoding="utf-8"))}
    assert codes <= {"load_failed", "bad_mix"}, codes


def test_upload_box_stylesheets_show_the_translated_labels():
    from ui.sentence_inputs import UPLOADER_CSS_EN, UPLOADER_CSS_ZH

    for lang, css in (("zh", UPLOADER_CSS_ZH), ("en", UPLOADER_CSS_EN)):
        labels = load(lang)
        assert f'content: "{labels["static.upload_button"]}"' in css
        assert f'content: "{labels["static.upload_limits"]}"' in css


def test_literal_keys_exist():
    zh = load("zh")
    used: dict[str, str] = {}
    for path in ui_sources():
        for match in T_CALL.finditer(path.read_text(encoding="utf-8")):
            used.setdefault(match.group(2), str(path.relative_to(ROOT)))
    assert used, "no t(...) calls found: is the regex still right?"
    missing = {key: where for key, where in used.items() if key not in zh}
    assert missing == {}


def test_page_keys_exist():
    from ui import PAGES

    zh = load("zh")
    for spec in PAGES:
        assert spec.title_key in zh and spec.desc_key in zh
        assert (ROOT / spec.path).exists()


def test_url_paths_are_unique_and_no_legacy_pages_folder():
    """A ``pages/`` folder next to app.py would switch on Streamlit's legacy multipage mode (see ui/__init__.py)."""
    from ui import PAGES

    assert len({spec.url_path for spec in PAGES}) == len(PAGES)
    assert not (ROOT / "pages").exists()


def test_translate_fallbacks():
    from ui.i18n import LANGS, translate

    assert set(LANGS) == {"zh", "en"}
    assert translate("en", "nav.home") == load("en")["nav.home"]
    assert translate("xx", "nav.home") == load("zh")["nav.home"]  # unknown language -> zh
    assert translate("en", "no.such.key") == "no.such.key"  # unknown key -> the key
    assert translate("en", "sidebar.model_unavailable", reason="r") == "This model is not available: r"
    # a missing placeholder is kept, not an exception
    assert "{reason}" in translate("en", "sidebar.model_unavailable")


@pytest.mark.parametrize("raw,cast,expected", [
    ("3", int, 3), ("x", int, None), ("1", bool, True), ("0", bool, False), ("maybe", bool, None),
    ('["a","b"]', list, ["a", "b"]), ("{}", list, None), ("not json", dict, None),
])
def test_state_decode(raw, cast, expected):
    from ui.state import decode, encode

    try:
        value = decode(raw, cast)
    except (ValueError, TypeError):
        value = None
    assert value == expected
    if expected is not None:
        assert decode(encode(expected), cast) == expected


def test_state_encode_compact():
    from ui.state import encode

    assert encode(["苹果", 1]) == '["苹果",1]'
    assert encode(True) == "1" and encode(None) is None and encode(2.5) == "2.5"


@pytest.mark.parametrize(("lang", "expected"), [("zh", "2026年12月03日 08:05（UTC）"), ("en", "2026-12-03 08:05 UTC")])
def test_timestamps_are_shown_per_language(monkeypatch, lang, expected):
    monkeypatch.setattr(i18n, "current_lang", lambda: lang)
    assert i18n.timestamp("2026-12-03T08:05:07Z") == expected
    assert i18n.timestamp("2026-12-03T08:05:07+00:00") == expected  # the other format the results files use
    assert i18n.timestamp("2026-12-03T16:05:07+08:00") == expected  # shown in UTC
    assert i18n.timestamp("?") == "?"
