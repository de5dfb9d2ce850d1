"""Shared fixtures: tiny randomly initialised BERT models built from a config (no network), a tiny models directory;
the test tiers (pytest.ini) and each tier's time at the end of a run."""
from __future__ import annotations

import string
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
import torch

from load_counting import count_loads
from model_support import REAL_MODELS, build_tiny_static

# ---- tiers ------------------------------------------------------------------------------------------------
# a test's tier is the first of these that it is marked with, or "fast"
SLOW_TIERS = ("browser", "nginx", "notebook", "postgres", "subprocess", "realmodel")
_tier_of: dict[str, str] = {}
_tier_seconds: dict[str, float] = defaultdict(float)
_tier_tests: dict[str, set[str]] = defaultdict(set)


SHIPPED_MODEL_FIXTURES = {"embedded_elmo_and_bert", "elmo", "bert", "shipped_models"}


def tier(item: pytest.Item) -> str:
    return next((name for name in SLOW_TIERS if item.get_closest_marker(name)), "fast")


# The longest tests start first, so that no worker (pytest.ini: -n 4) begins one while the others are finishing;
# measured on two workers (docs/testing.md): the walks at 1280×720 5–6 min each, the ten sessions 100 s, these
# others 45–70 s.
LONGEST_FIRST = ("test_every_scene_in_view_below_a_steady_bar[en-1280x720]",
                 "test_every_scene_in_view_below_a_steady_bar[zh-1280x720]", "test_ten_sessions_at_once",
                 "test_every_page_opens_with_its_question_and_answer_in_both_languages",
                 "test_every_scene_in_view_below_a_steady_bar[zh-1920x1080]",
                 "test_an_edited_sentence_keeps_its_result_in_view[zh]",
                 "test_an_edited_sentence_keeps_its_result_in_view[en]",
                 "test_a_phones_sentence_reaches_the_projector_and_survives_kill_9")


@pytest.hookimpl(tryfirst=True)  # before -m selects: `-m fast` sees the marks
def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: LONGEST_FIRST.index(item.name) if item.name in LONGEST_FIRST else len(LONGEST_FIRST))
    for item in items:
        if SHIPPED_MODEL_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.realmodel)
        _tier_of[item.nodeid] = tier(item)
        item.user_properties.append(("tier", _tier_of[item.nodeid]))  # its reports carry it (to xdist's controller)
        if _tier_of[item.nodeid] == "fast":
            item.add_marker(pytest.mark.fast)


@pytest.fixture(autouse=True)
def _fast_tier_stays_fast(request, monkeypatch):
    """A fast-tier test that asks the registry for a shipped model or starts a Python process fails (after its run:
    a page turns the failure into a line): it belongs to the realmodel tier (or its pages should run on
    ``tiny_embedded``), or to the subprocess tier (a library's own ``uname -p`` is no such process)."""
    if _tier_of.get(request.node.nodeid, "fast") != "fast":
        yield
        return
    from core.models import cache, catalogue

    used, started, load_by_key, popen_init = [], [], cache.load_by_key, subprocess.Popen.__init__

    def guarded(key: str, **options):
        if key in catalogue.EMBEDDED and (Path(catalogue.MODELS_DIR) / key).resolve().parent == REAL_MODELS:
            used.append(key)
        return load_by_key(key, **options)

    def starting(self, args, *more, **options):
        if Path(args if isinstance(args, (str, Path)) else args[0]).name.startswith("python"):
            started.append(args)
        popen_init(self, args, *more, **options)

    monkeypatch.setattr(cache, "load_by_key", guarded)
    monkeypatch.setattr(subprocess.Popen, "__init__", starting)
    yield
    assert not used, f"a fast-tier test used the shipped {sorted(set(used))}: mark it realmodel or use tiny_embedded"
    assert not started, f"a fast-tier test started {started}: mark it subprocess"


def pytest_runtest_logreport(report):
    """Setup, call and teardown of each test, added to its tier (a module fixture's cost to its first test). With
    workers (``-n 2``) the controller hears every report, the tier from the worker that collected the test."""
    name = dict(report.user_properties).get("tier") or _tier_of.get(report.nodeid, "fast")
    _tier_seconds[name] += report.duration
    _tier_tests[name].add(report.nodeid)


def pytest_terminal_summary(terminalreporter):
    """One line per tier that ran: the CI log says what each tier costs (collection and start-up not included; with
    workers, the sum over them, more than the wall time)."""
    if _tier_seconds:
        terminalreporter.write_sep("-", "time per tier")
        for name in ("fast", *SLOW_TIERS):
            if name in _tier_seconds:
                terminalreporter.write_line(f"tier {name}: {_tier_seconds[name]:.1f} s, {len(_tier_tests[name])} tests")


TINY_TEXT = ("我吃了一个苹果昨天发布新手机他背着包袱去北京心里的放下说相声抖银行在那边走行不"
             "今天天气很好。，！？水果公司的是了人")


def build_tiny_bert(directory: Path, *, with_nsp: bool = True, seed: int = 0, layers: int = 2, heads: int = 2,
                    extra_chars: str = "", vocab: list[str] | None = None, positions: int = 64,
                    **config_fields) -> Path:
    """Save a randomly initialised BERT (vocab: specials, ASCII pieces, a few hundred characters; or ``vocab``);
    ``config_fields`` go into its ``BertConfig``."""
    from transformers import BertConfig, BertForMaskedLM, BertForPreTraining, BertTokenizerFast

    torch.manual_seed(seed)
    if vocab is None:
        pieces = list(string.ascii_lowercase + string.digits)
        vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + pieces + ["##" + p for p in pieces]
        vocab += [c for c in dict.fromkeys(TINY_TEXT + extra_chars) if c not in vocab]
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab=str(directory / "vocab.txt"), do_lower_case=True)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=layers, num_attention_heads=heads,
                        intermediate_size=64, max_position_embeddings=positions, **config_fields)
    model = (BertForPreTraining if with_nsp else BertForMaskedLM)(config)
    model.save_pretrained(directory, safe_serialization=True)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory) -> Path:
    return build_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="session")
def tiny_mlm_dir(tmp_path_factory) -> Path:
    """A masked LM without the NSP head (like many hub models)."""
    return build_tiny_bert(tmp_path_factory.mktemp("tiny-mlm"), with_nsp=False, seed=1)


@pytest.fixture(scope="session")
def tiny(tiny_bert_dir) -> str:
    """The tiny BERT as a page gets it: its directory as the model name in the sidebar's box."""
    return str(tiny_bert_dir)


@pytest.fixture(scope="session")
def tiny_bert(tiny_bert_dir):
    from core.models.cache import load_encoder

    return load_encoder(str(tiny_bert_dir))


@pytest.fixture(scope="session", autouse=True)
def skip_component_discovery():
    """AppTest scans every installed package's metadata for custom components on each new AppTest (0.1–0.3 s
    each, a fifth of the fast tier when only some modules skipped it); the pages use none, so no test scans."""
    from streamlit.components.v2.component_manager import BidiComponentManager

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(BidiComponentManager, "discover_and_register_components", lambda self, *a, **k: None)
        yield


@pytest.fixture(scope="session", autouse=True)
def one_script_cache():
    """AppTest compiles the page's script anew for each run (a ScriptCache per run, 8 % of the bad-input matrix's
    time); the server keeps one for all sessions' runs, and so do the tests."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test

    shared = ScriptCache()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(app_test, "ScriptCache", lambda: shared)
        yield


# ---- the embedded models (tests of pages and views that need both real models) ----------------------
@pytest.fixture(scope="module")
def embedded_elmo_and_bert():
    """Skips the module when mini-elmo-zh or mini-bert-zh is not trained."""
    from core.models.catalogue import DEFAULT_BERT, DEFAULT_ELMO, list_models

    missing = [m.name for m in list_models() if m.name in (DEFAULT_ELMO, DEFAULT_BERT) and not m.available]
    if missing:
        pytest.skip(f"embedded models not available: {missing}")


@pytest.fixture(scope="module")
def elmo(embedded_elmo_and_bert):
    from core.models.cache import load_encoder
    from core.models.catalogue import DEFAULT_ELMO

    return load_encoder(DEFAULT_ELMO)


@pytest.fixture(scope="module")
def bert(embedded_elmo_and_bert):
    from core.models.cache import load_encoder
    from core.models.catalogue import DEFAULT_BERT

    return load_encoder(DEFAULT_BERT)



# ---- the embedded models' stand-ins: the fast tier's pages run on these ----------------------------------
def build_tiny_embedded(directory: Path) -> Path:
    """assets/models as the app reads it, with randomly initialised models of the embedded models' shapes where a
    page's handling depends on them (vocabulary, layers, heads, 128 positions) and tiny sizes elsewhere: a page
    run costs what the page costs, not what the model does."""
    from core.models.catalogue import DEFAULT_BERT, DEFAULT_ELMO, DEFAULT_STATIC
    from core.models.elmo import BiLM, BiLMConfig

    vocab = (REAL_MODELS / DEFAULT_BERT / "vocab.txt").read_text(encoding="utf-8").splitlines()
    build_tiny_bert(directory / DEFAULT_BERT, vocab=vocab, layers=4, heads=4, positions=128)
    torch.manual_seed(0)
    BiLM(BiLMConfig(vocab_size=len(vocab), embed_dim=16, hidden_dim=16, num_layers=2, dropout=0.0)).save(
        directory / DEFAULT_ELMO, vocab)
    build_tiny_static(directory / DEFAULT_STATIC)
    return directory


@pytest.fixture(scope="session")
def tiny_embedded_dir(tmp_path_factory) -> Path:
    return build_tiny_embedded(tmp_path_factory.mktemp("tiny-embedded"))


@pytest.fixture(scope="module")
def tiny_embedded(tiny_embedded_dir):
    """The module's pages and core calls get the tiny stand-ins under the embedded models' names."""
    with pytest.MonkeyPatch.context() as mp:
        use_models_dir(tiny_embedded_dir, mp.setattr)
        yield tiny_embedded_dir
    reset_model_caches()


@pytest.fixture
def shipped_models(monkeypatch):
    """The shipped models again, for one test of a module that runs on ``tiny_embedded``."""
    use_models_dir(REAL_MODELS, monkeypatch.setattr)
    yield REAL_MODELS
    reset_model_caches()


# ---- a models directory for the page tests ----------------------------------------------------------
def use_models_dir(directory: Path, setattr) -> None:
    """The catalogue lists and the loaders read the models in ``directory``."""
    from core.models import catalogue

    setattr(catalogue, "MODELS_DIR", directory)
    reset_model_caches()


def reset_model_caches():
    import streamlit as st

    from core.models import cache

    cache.clear()
    st.cache_data.clear()
    st.cache_resource.clear()


def use_tiny_models_dir(directory: Path, setattr) -> Path:
    """assets/models replaced by: a tiny word2vec-zh, no mini-elmo-zh (add it with model_support.link_real_elmo)."""
    build_tiny_static(directory / "word2vec-zh")
    use_models_dir(directory, setattr)
    return directory


@pytest.fixture
def models_dir(tmp_path, monkeypatch):
    """A tiny models directory of the test's own, which it may change."""
    yield use_tiny_models_dir(tmp_path / "models", monkeypatch.setattr)
    reset_model_caches()


@pytest.fixture(scope="module")
def shared_models_dir(tmp_path_factory):
    """The tiny models directory for the module's tests that leave it as it is: its models are loaded once (each
    load of the tiny word2vec builds a jieba dictionary, 0.8 s)."""
    with pytest.MonkeyPatch.context() as mp:
        yield use_tiny_models_dir(tmp_path_factory.mktemp("models"), mp.setattr)
    reset_model_caches()


@pytest.fixture
def clean_model_cache():
    """The model cache and its remembered answers (failed loads, the hub probe) emptied for the test, and
    again after it: a later test loads again what it needs."""
    from core.models import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def model_loads(monkeypatch):
    """How often each model key is really loaded during the test (a Counter; ``load_counting.count_loads``)."""
    from core.models import loaders

    return count_loads(loaders, monkeypatch.setattr)


@pytest.fixture
def encode_calls(monkeypatch):
    """How many times a contextual model really runs (BERT or ELMo forward passes), counted from an empty
    data cache: an encoding cached by an earlier test would hide the first run."""
    import streamlit as st

    from core.models.encoders import BertEncoder, ElmoEncoder

    st.cache_data.clear()

    calls = []
    for cls in (BertEncoder, ElmoEncoder):
        original = cls.encode

        def counting(self, sentences, *args, _original=original, **kwargs):
            calls.append(list(sentences))
            return _original(self, sentences, *args, **kwargs)

        monkeypatch.setattr(cls, "encode", counting)
    return calls


# ---- a hub that never answers --------------------------------------------------------------------------
@pytest.fixture
def silent_hub(monkeypatch):
    """A "hub" on 127.0.0.1 that accepts connections and never answers, as the endpoint of this process's
    hub calls. It stops by itself after 60 s (or at the end of the test) and closes what it accepted."""
    import socket
    import threading
    import time

    import huggingface_hub.constants

    from core.models import hub

    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop, accepted = threading.Event(), []

    def serve():
        deadline = time.monotonic() + 60
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                accepted.append(server.accept()[0])
            except TimeoutError:
                pass
        for connection in accepted:
            connection.close()
        server.close()

    thread = threading.Thread(target=serve, daemon=True, name="silent-hub")
    thread.start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}"
    monkeypatch.setenv("HF_ENDPOINT", url)  # the probe (and a subprocess) read it here
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", url)  # read once at import by this process
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    # no user-agent telemetry: it would first ask this hub for its agent registry, and wait 3 s for it
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_TELEMETRY", True)
    hub.forget_probe()  # probe this hub, not remember another's answer
    yield url, accepted
    stop.set()
    thread.join(5)
    hub.forget_probe()  # its answer was this hub's
