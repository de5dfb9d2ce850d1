"""Security checks of the source tree and the model loader.

(a) User text is never rendered as raw HTML: every ``unsafe_allow_html=True`` (and every ``st.html`` /
    ``components.html``) renders a module-level string constant or a literal. The browser half of
    this check types ``<img src=x onerror=...>`` into a page (tests/e2e/test_pages_browser.py::
    test_user_text_is_not_html).
(b) Weights are read through safetensors only: no ``pickle.load`` anywhere, ``torch.load`` only for
    training checkpoints in core/train/common.py with ``weights_only=True``, and a model directory with
    pickle weights only is refused (``LabError("unsafe_weights")``) without unpickling anything.
(c) ``trust_remote_code`` is never true.
(d) Uploads are size-limited (.streamlit/config.toml ``server.maxUploadSize``: what the app accepts).
(e) Markdown from model names stays inert, URL JSON is bounded, the model cache and server settings hold.
(f) Training from the browser only when the presenter turned it on, one run at a time; a model
    directory's config and weights checked before they cost memory; user text never becomes a link.
"""
from __future__ import annotations

import ast
import pickle
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import build_tiny_bert
from core.guard.errors import LabError

ROOT = Path(__file__).resolve().parent.parent
APP_SOURCES = sorted([ROOT / "app.py", *(ROOT / "app_pages").rglob("*.py"), *(ROOT / "ui").rglob("*.py"),
                      *(ROOT / "core").rglob("*.py")])
ALL_SOURCES = sorted(set(APP_SOURCES) | set((ROOT / "benchmarks").rglob("*.py")))
TRAINING_CHECKPOINTS = ROOT / "core" / "train" / "common.py"


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_sources_found():
    assert len(APP_SOURCES) > 20 and ROOT / "app.py" in APP_SOURCES
    assert TRAINING_CHECKPOINTS.exists()


# ---- (a) raw HTML --------------------------------------------------------------------------------------
def binding_counts(tree: ast.Module) -> dict[str, int]:
    """How often each name is bound anywhere in the module (a ``global`` declaration counts as many)."""
    bindings: dict[str, int] = {}
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            targets = [node.target]
        elif isinstance(node, (ast.For, ast.comprehension)):
            targets = [node.target]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bindings[node.name] = bindings.get(node.name, 0) + 1
        elif isinstance(node, ast.Global):
            for name in node.names:
                bindings[name] = bindings.get(name, 0) + 99
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    bindings[name.id] = bindings.get(name.id, 0) + 1
    return bindings


def module_string_constants(tree: ast.Module) -> set[str]:
    """Names bound exactly once in the module, at module level, to a string literal (never rebound,
    never declared ``global`` in a function)."""
    bindings = binding_counts(tree)
    constants = set()
    for node in tree.body:
        value, targets = None, []
        if isinstance(node, ast.Assign):
            value, targets = node.value, node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            value, targets = node.value, [node.target]
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            for target in targets:
                if isinstance(target, ast.Name) and bindings.get(target.id) == 1:
                    constants.add(target.id)
    return constants


def html_sinks(tree: ast.Module):
    """(call, reason) for every call that renders raw HTML: unsafe_allow_html=<not False>, st.html(...),
    components.html(...)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            if kw.arg == "unsafe_allow_html" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                yield node, "unsafe_allow_html"
            if kw.arg is None and isinstance(kw.value, ast.Dict):  # **{"unsafe_allow_html": True}
                if any(isinstance(k, ast.Constant) and k.value == "unsafe_allow_html" for k in kw.value.keys):
                    yield node, "unsafe_allow_html"
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "html":
            yield node, "html"


def unsafe_html_problems(tree: ast.Module, name: str) -> list[str]:
    constants = module_string_constants(tree)
    problems = []
    for call, reason in html_sinks(tree):
        where = f"{name}:{call.lineno} ({reason})"
        kw_flag = next((kw.value for kw in call.keywords if kw.arg == "unsafe_allow_html"), None)
        if kw_flag is not None and not (isinstance(kw_flag, ast.Constant) and kw_flag.value is True):
            problems.append(f"{where}: unsafe_allow_html must be the literal True or False")
        args = list(call.args) + [kw.value for kw in call.keywords if kw.arg in ("body", "html")]
        if not args:
            problems.append(f"{where}: no content argument")
            continue
        first = args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            continue
        if isinstance(first, ast.Name) and first.id in constants:
            continue
        problems.append(f"{where}: renders {ast.unparse(first)[:80]!r}, not a module-level string constant")
    return problems


def test_raw_html_only_renders_constants():
    problems, sinks = [], 0
    for path in APP_SOURCES:
        tree = parse(path)
        sinks += sum(1 for _ in html_sinks(tree))
        problems += unsafe_html_problems(tree, rel(path))
    assert not problems, "\n".join(problems)
    assert sinks >= 1, "the checker should at least see the presentation-mode stylesheets"


@pytest.mark.parametrize("source, ok", [
    ('CSS = "<style></style>"\nst.markdown(CSS, unsafe_allow_html=True)', True),
    ('st.markdown("<br>", unsafe_allow_html=True)', True),
    ('st.markdown(text, unsafe_allow_html=False)', True),
    ('st.markdown(f"<b>{name}</b>", unsafe_allow_html=True)', False),
    ('CSS = "x"\nCSS = user\nst.markdown(CSS, unsafe_allow_html=True)', False),
    ('def f():\n    CSS = "x"\n    st.markdown(CSS, unsafe_allow_html=True)', False),
    ('st.markdown("<b>" + name, unsafe_allow_html=True)', False),
    ('st.markdown(text, unsafe_allow_html=flag)', False),
    ('st.html(user_text)', False),
    ('st.components.v1.html(page)', False),
    ('CSS = "<style></style>"\nst.html(CSS)', True),
])
def test_the_html_checker_itself(source, ok):
    assert (unsafe_html_problems(ast.parse(source), "example") == []) is ok


# ---- (b) safetensors only ------------------------------------------------------------------------------
PICKLE_MODULES = {"pickle", "cPickle", "_pickle", "dill", "cloudpickle", "joblib", "shelve", "marshal"}


def load_calls(tree: ast.Module):
    """(kind, call) for torch.load / pickle-ish loads / np.load(allow_pickle=True) / pandas.read_pickle."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            top = node.module.split(".")[0]
            for alias in node.names:
                if top == "torch" and alias.name == "load":
                    aliases[alias.asname or alias.name] = "torch.load"
                if top in PICKLE_MODULES and alias.name in ("load", "loads", "Unpickler", "open"):
                    aliases[alias.asname or alias.name] = "pickle.load"
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in aliases:
            yield aliases[func.id], node
        elif isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            if owner == "torch" and func.attr == "load":
                yield "torch.load", node
            elif owner in PICKLE_MODULES and func.attr in ("load", "loads", "Unpickler", "open"):
                yield "pickle.load", node
            elif func.attr == "read_pickle":
                yield "pickle.load", node
            elif func.attr == "load" and owner in ("np", "numpy"):
                flag = next((kw.value for kw in node.keywords if kw.arg == "allow_pickle"), None)
                if flag is not None and not (isinstance(flag, ast.Constant) and flag.value is False):
                    yield "pickle.load", node


def test_no_pickle_loading_in_the_app():
    problems, torch_loads = [], 0
    for path in APP_SOURCES:
        for kind, call in load_calls(parse(path)):
            where = f"{rel(path)}:{call.lineno}"
            if kind == "pickle.load":
                problems.append(f"{where}: unpickling ({ast.unparse(call)[:80]})")
            elif path != TRAINING_CHECKPOINTS:
                problems.append(f"{where}: torch.load outside {rel(TRAINING_CHECKPOINTS)}")
            else:
                torch_loads += 1
                flag = next((kw.value for kw in call.keywords if kw.arg == "weights_only"), None)
                if not (isinstance(flag, ast.Constant) and flag.value is True):
                    problems.append(f"{where}: torch.load without weights_only=True")
    assert not problems, "\n".join(problems)


def test_the_load_checker_itself():
    bad = ast.parse("import pickle, torch\nfrom pickle import loads as L\npickle.load(f)\nL(b)\ntorch.load(p)\n"
                    "np.load(p, allow_pickle=True)\npd.read_pickle(p)")
    assert [kind for kind, _ in load_calls(bad)] .count("pickle.load") == 4
    assert [kind for kind, _ in load_calls(bad)].count("torch.load") == 1
    assert list(load_calls(ast.parse("np.load(p)\nsafetensors.torch.load_file(p)\njson.load(f)"))) == []


class _Payload:
    """Unpickling this creates a file: proof that a pickle was executed."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def _pickle_weights(directory: Path, marker: Path) -> None:
    (directory / "pytorch_model.bin").write_bytes(pickle.dumps(_Payload(marker)))


def test_pickle_only_model_directory_is_refused(tmp_path):
    from core.models.cache import load_encoder

    directory = build_tiny_bert(tmp_path / "pickle-only")
    (directory / "model.safetensors").unlink()
    marker = tmp_path / "pickle-was-executed"
    _pickle_weights(directory, marker)
    with pytest.raises(LabError) as info:
        load_encoder(str(directory))
    assert info.value.code == "unsafe_weights"
    assert "pytorch_model.bin" in str(info.value) and "safetensors" in info.value.message("zh")
    assert not marker.exists(), "the pickle was executed"


def test_safetensors_win_over_a_pickle_next_to_them(tmp_path):
    from core.models.cache import load_encoder

    directory = build_tiny_bert(tmp_path / "both")
    marker = tmp_path / "pickle-was-executed"
    _pickle_weights(directory, marker)
    encoder = load_encoder(str(directory))
    assert encoder.kind == "bert" and encoder.encode(["我吃了一个苹果"])[0].layers.shape[0] == 3
    assert not marker.exists(), "the pickle was executed"


def test_real_pytorch_bin_is_refused_too(tmp_path):
    """A genuine torch pickle of the weights (``pytorch_model.bin``, what old hub models ship)."""
    import torch
    from safetensors.torch import load_file

    from core.models.cache import load_encoder

    directory = build_tiny_bert(tmp_path / "bin")
    weights = load_file(directory / "model.safetensors")
    (directory / "model.safetensors").unlink()
    torch.save(weights, directory / "pytorch_model.bin")
    with pytest.raises(LabError) as info:
        load_encoder(str(directory))
    assert info.value.code == "unsafe_weights"


# ---- (c) no remote code ----------------------------------------------------------------------------------
def test_trust_remote_code_is_never_true():
    problems = []
    for path in ALL_SOURCES:
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"trust_remote_code\W{0,3}\s*[=:]\s*(\w+)", text):
            if m.group(1) != "False":
                problems.append(f"{rel(path)}:{text[:m.start()].count(chr(10)) + 1}: {m.group(0)}")
        for node in ast.walk(parse(path)):
            values = []
            if isinstance(node, ast.Call):
                values += [kw.value for kw in node.keywords if kw.arg == "trust_remote_code"]
            if isinstance(node, ast.Dict):
                values += [v for k, v in zip(node.keys, node.values)
                           if isinstance(k, ast.Constant) and k.value == "trust_remote_code"]
            for value in values:
                if not (isinstance(value, ast.Constant) and value.value is False):
                    problems.append(f"{rel(path)}:{value.lineno}: trust_remote_code={ast.unparse(value)}")
    assert not problems, "\n".join(problems)


def test_a_model_directorys_own_code_never_runs(tmp_path):
    """A checkpoint may name its own Python classes (``auto_map``); loading it runs the library's BERT code, never
    the directory's (it would write a file here if imported)."""
    import json

    from core.models.cache import load_encoder

    directory = build_tiny_bert(tmp_path / "custom-code")
    ran = tmp_path / "custom-code-ran"
    code = f"from pathlib import Path\nPath({str(ran)!r}).write_text('ran')\n"
    for module in ("configuration_custom", "modeling_custom", "tokenization_custom"):
        (directory / f"{module}.py").write_text(code + "from transformers import *\n", encoding="utf-8")
    for file, auto_map in (("config.json", {"AutoConfig": "configuration_custom.BertConfig",
                                            "AutoModelForMaskedLM": "modeling_custom.BertForMaskedLM"}),
                           ("tokenizer_config.json", {"AutoTokenizer": ["tokenization_custom.BertTokenizer", None]})):
        settings = json.loads((directory / file).read_text(encoding="utf-8"))
        (directory / file).write_text(json.dumps({**settings, "auto_map": auto_map}), encoding="utf-8")
    encoder = load_encoder(str(directory))
    assert not ran.exists() and type(encoder.model).__module__.startswith("transformers.")


# ---- (d) upload size and server settings ------------------------------------------------------------------
def test_upload_size_is_limited():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    server = config.get("server", {})
    assert "maxUploadSize" in server, "server.maxUploadSize must be set (Streamlit's default is 200 MB)"
    assert 0 < server["maxUploadSize"] <= 5
    from core.content.sentence_sets import MAX_UPLOAD_BYTES

    assert MAX_UPLOAD_BYTES == server["maxUploadSize"] * 1_000_000  # the server takes what the app takes
    # the protections Streamlit has on by default stay on
    assert server.get("enableXsrfProtection", True) is True
    assert server.get("enableCORS", True) is True
    assert config.get("client", {}).get("showErrorDetails", "full") in ("none", False), \
        "tracebacks must not reach the browser"


# ---- (e) Markdown from names, bounded URL JSON, model cache, server settings ------------------------
MD_PAYLOADS = ["![i](http://evil.example/md.png)", "[x](http://evil.example)", "<http://evil.example/a>",
               ":material/home: **b** `c`", "a`b![i](http://evil.example/c.png)"]


@pytest.mark.parametrize("payload", MD_PAYLOADS)
def test_lab_error_parameters_are_inert_markdown(payload):
    from core.guard.errors import MESSAGES
    from core.guard.safe_text import md_escape

    for code, templates in MESSAGES.items():
        names = set(re.findall(r"{(\w+)}", templates["en"] + templates["zh"]))
        err = LabError(code, **{name: payload for name in names})
        for lang in ("zh", "en"):
            text = err.message(lang, markdown=True)
            if not names:
                continue
            outside_code = re.split(r"(?<!\\)`", text)[::2]  # Markdown is live outside code spans only
            live = [re.sub(r"\\.", "", part) for part in outside_code]  # what is left after the escapes
            assert not any("![" in part or "](" in part or "<http" in part or ":material" in part for part in live), \
                (code, text)
            assert md_escape(payload) in text or "`" in templates[lang], (code, text)
            assert payload in err.message(lang, markdown=False)  # the CLI shows it as typed
    assert str(LabError("unknown_model", name=payload)).count(payload) == 1


@pytest.mark.parametrize("payload", MD_PAYLOADS + ["a" * 201, "x\x00y", "m\nn", "/" + "目" * 90])
def test_model_names_cannot_carry_markdown(payload):
    from core.models.catalogue import model_key
    from ui.sidebar import clean_model_id

    assert clean_model_id(payload) is None
    with pytest.raises(LabError) as info:
        model_key(payload)
    assert info.value.code == "unknown_model"


@pytest.mark.parametrize("name", ["mini-bert-zh", "bert-base-chinese", "hfl/chinese-roberta-wwm-ext",
                                  "/data/models/my bert", "~/models/bert_v2", "./模型/bert-1.0"])
def test_ordinary_model_names_are_accepted(name):
    from ui.sidebar import clean_model_id

    assert clean_model_id(f"  {name} ") == name


def test_server_paths_cannot_be_probed(tmp_path):
    """A missing path, a file, an empty and a non-model directory all give the very same message."""
    from core.models.cache import load_encoder

    (tmp_path / "empty").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("x", encoding="utf-8")
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    messages = set()
    for target in ("missing", "empty", "other", "file.txt", "other/notes.txt"):
        with pytest.raises(LabError) as info:
            load_encoder(str(tmp_path / target))
        assert info.value.code == "unknown_model"
        # the name as typed (shortened when long: a test worker's temporary folder is) is all that may differ
        messages.add(re.sub(r"“[^”]*”", "“PATH”", info.value.message("en", markdown=True)))
    assert len(messages) == 1, messages


@pytest.mark.parametrize("raw", ["[" * 100_000, "[" * 60_000 + "]" * 60_000, '{"a":' * 50_000 + "1" + "}" * 50_000,
                                 "[NaN]", "[1e999]", "x" * 200_001])
def test_url_json_is_bounded(raw):
    from ui.state import decode

    with pytest.raises(ValueError):
        decode(raw, list)


def test_json_depth_ignores_brackets_inside_strings():
    from core.guard.safe_json import loads, nesting_depth

    assert nesting_depth('["a\\"[[[", [1, {"b": "]]]\\\\"}]]') == 3
    assert loads('["[[[[[[[[[[\\"", [[1]]]') == ['[[[[[[[[[["', [[1]]]
    assert nesting_depth('"\\"' * 50_000) == 0  # linear: no rescans from every quote


def test_url_json_keeps_ordinary_values():
    from ui.state import decode, encode

    for value in ([1, 2, 3], [[0.2, 0.3, 0.5]], ["苹果", "[不是括号"], {"a": [1, {"b": 2}]}):
        assert decode(encode(value), type(value)) == value


@pytest.mark.realmodel
@pytest.mark.parametrize("page, key", [("fill_mask", "chars"), ("elmo_weights", "w")])
def test_deep_url_json_falls_back_to_defaults(page, key):
    from apptest_support import page_app

    at = page_app(str(ROOT / "app_pages" / page / "page.py"), "mini-bert-zh", query={key: "[" * 50_000 + "]" * 50_000})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title


def test_server_settings_keep_the_watcher_off_and_listen_locally():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    server = config["server"]
    assert server.get("fileWatcherType") == "none" and server.get("runOnSave") is False
    assert server.get("address") == "127.0.0.1"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "--server.address 0.0.0.0" in readme and "127.0.0.1" in readme


@pytest.mark.subprocess
def test_server_reads_no_full_garbage_collection_after_each_run():
    """Streamlit's default gc.collect() after every script run held the GIL for ~0.25 s per run: 65% of the
    server's CPU with 30 sessions (benchmarks/README.md). The option must exist and be read as off."""
    probe = ("from streamlit import config; config.get_config_options(force_reparse=True); "
             "print(config.get_option('runner.postScriptGC'))")
    shown = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert shown.stdout.strip().splitlines()[-1] == "False", shown.stdout + shown.stderr


def test_app_makes_no_remote_icon_request():
    """A ``:material/…:`` page icon becomes a favicon fetched from fonts.gstatic.com."""
    for call in ast.walk(parse(ROOT / "app.py")):
        if isinstance(call, ast.Call) and getattr(call.func, "attr", None) == "set_page_config":
            icon = next(kw.value for kw in call.keywords if kw.arg == "page_icon")
            assert isinstance(icon, ast.Constant) and not icon.value.startswith(":material/"), ast.unparse(icon)


# ---- (f) training switch, model directories that cost memory, autolinks ----------------------------------
def transfer_page(monkeypatch, tiny_bert_dir, tmp_path):
    """The transfer page without results (its recompute box open) on the tiny BERT, run once."""
    from streamlit.testing.v1 import AppTest

    from core import transfer

    monkeypatch.setattr(transfer, "RESULTS_PATH", tmp_path / "none.json")
    monkeypatch.setattr(transfer, "BERT_MODEL", str(tiny_bert_dir))
    monkeypatch.setattr(transfer, "ELMO_MODEL", None)
    at = AppTest.from_file(str(ROOT / "app_pages" / "transfer" / "page.py"), default_timeout=300)
    at.session_state["lang"] = "en"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_training_from_the_browser_is_off_by_default(monkeypatch, tiny_bert_dir, tmp_path):
    from ui import training_gate

    monkeypatch.delenv(training_gate.SWITCH, raising=False)
    at = transfer_page(monkeypatch, tiny_bert_dir, tmp_path)
    assert at.button(key="transfer_run").disabled
    assert any(training_gate.SWITCH in i.value for i in at.info)
    # a click on the disabled button (what a crafted request could send) starts nothing either: AppTest clicks
    # enabled buttons only, so the button is enabled for the click and the switch is off when it arrives
    monkeypatch.setenv(training_gate.SWITCH, "1")
    at.run()
    monkeypatch.delenv(training_gate.SWITCH)
    at.button(key="transfer_run").click().run()
    assert not at.exception and "transfer_results" not in at.session_state and not at.get("progress")
    assert training_gate.start() == "gate.off"


def test_one_training_run_at_a_time(monkeypatch, tiny_bert_dir, tmp_path):
    from ui import training_gate

    monkeypatch.setenv(training_gate.SWITCH, "1")
    at = transfer_page(monkeypatch, tiny_bert_dir, tmp_path)
    assert not at.button(key="transfer_run").disabled
    assert training_gate.start() is None  # another session's run holds the server's one slot
    try:
        at.button(key="transfer_run").click().run()
    finally:
        training_gate.finish()
    assert not at.exception and "transfer_results" not in at.session_state
    assert any("one at a time" in w.value for w in at.warning)
    assert training_gate.start() is None  # the refused click left the slot as it was
    training_gate.finish()


UI_SOURCES = [p for p in APP_SOURCES if not rel(p).startswith("core/")]


def _resolve(node: ast.AST, names: dict):
    """The object a ``Name`` / ``a.b.c`` node of a UI module stands for, from the module's imports; else None."""
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, names)
        return getattr(base, node.attr, None) if base is not None else None
    return None


def _imported_names(tree: ast.Module) -> dict:
    import importlib

    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                names[alias.asname or top] = importlib.import_module(alias.asname and alias.name or top)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            module = importlib.import_module(node.module)
            for alias in node.names:
                value = getattr(module, alias.name, None)
                if value is None:  # a submodule
                    value = importlib.import_module(f"{node.module}.{alias.name}")
                names[alias.asname or alias.name] = value
    return names


def heavy_job_uses(path: Path) -> list[tuple[int, object, bool]]:
    """``(line, job, gated)`` for every use of a job that runs for minutes in a UI module: a core function marked
    ``core.runtime.concurrency.heavy``, or one that reports ``progress`` (what a long job does); ``gated``: the use is
    the job handed to ``ui.training_gate.run``."""
    import inspect

    from core.runtime.concurrency import HEAVY_JOBS
    from ui import training_gate

    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = _imported_names(tree)
    gated = {id(call.args[0]) for call in ast.walk(tree) if isinstance(call, ast.Call) and call.args
             and _resolve(call.func, names) is training_gate.run}
    uses = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Name | ast.Attribute) or isinstance(getattr(node, "ctx", None), ast.Store):
            continue
        obj = _resolve(node, names)
        if not callable(obj) or not (getattr(obj, "__module__", None) or "").startswith("core"):
            continue
        try:
            reports_progress = "progress" in inspect.signature(obj).parameters
        except (TypeError, ValueError):
            reports_progress = False
        if obj in HEAVY_JOBS or reports_progress:
            uses.append((node.lineno, obj, id(node) in gated))
    return uses


def test_every_heavy_browser_control_goes_through_the_one_gate():
    """The attack: a visitor starts a job that runs for minutes (the evidence page's recompute had no gate, two
    at once doubled the server's RSS). Every such job a page can start is found here, marked, and gated."""
    from core.experiments import run_all
    from core.runtime.concurrency import HEAVY_JOBS
    from core.transfer import recompute

    found = {rel(path): heavy_job_uses(path) for path in UI_SOURCES}
    uses = [(where, line, job, gated) for where, entries in found.items() for line, job, gated in entries]
    jobs = {job for _, _, job, _ in uses}
    assert {run_all, recompute} <= jobs, uses  # the two recomputations, the evidence page's and the transfer page's
    assert jobs <= HEAVY_JOBS, [j for j in jobs - HEAVY_JOBS]  # a new job that reports progress must be marked
    assert [(where, line) for where, line, _, gated in uses if not gated] == []


@pytest.mark.parametrize("source, gated", [
    ("from core.experiments import run_all\nrun_all(['m'])\n", False),
    ("from core import experiments\nx = experiments.run_all\n", False),
    ("from core.experiments import run_all\nfrom ui import training_gate\ntraining_gate.run(run_all, ['m'])\n",
     True),
])
def test_the_gate_checker_itself(tmp_path, source, gated):
    path = tmp_path / "page.py"
    path.write_text(source, encoding="utf-8")
    assert [g for _, _, g in heavy_job_uses(path)] == [gated]


def test_the_gate_refuses_an_unmarked_job(monkeypatch):
    from ui import training_gate

    monkeypatch.setenv(training_gate.SWITCH, "1")
    with pytest.raises(TypeError, match="heavy"):
        training_gate.run(sorted, [2, 1])


def evidence_recompute_page(monkeypatch):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app_pages" / "evidence" / "page.py"), default_timeout=300)
    at.session_state["lang"] = "en"
    at.query_params["section"] = "recompute"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_evidence_recompute_is_gated_too(monkeypatch):
    """The attack on main: the evidence page's Start ran the experiments for any visitor, on whatever model the
    sidebar named, with no switch and no one-at-a-time rule."""
    from ui import training_gate

    monkeypatch.delenv(training_gate.SWITCH, raising=False)
    at = evidence_recompute_page(monkeypatch)
    assert at.button(key="_ev_run").disabled and any(training_gate.SWITCH in i.value for i in at.info)
    monkeypatch.setenv(training_gate.SWITCH, "1")  # enabled for AppTest's click, off again when the click arrives
    at.run()
    monkeypatch.delenv(training_gate.SWITCH)
    at.button(key="_ev_run").click().run()
    assert not at.exception and not at.get("progress") and not at.success

    monkeypatch.setenv(training_gate.SWITCH, "1")
    at.run()
    assert training_gate.start() is None  # another session's run holds the process's one slot
    try:
        at.button(key="_ev_run").click().run()
    finally:
        training_gate.finish()
    assert not at.exception and not at.get("progress") and not at.success
    assert any("one at a time" in w.value for w in at.warning)


def test_a_training_run_gets_its_own_copy_of_the_model(tiny_bert_dir):
    from core.models.cache import load_encoder, load_private
    from core.models.catalogue import model_key

    shared = load_encoder(str(tiny_bert_dir))
    own = load_private(str(tiny_bert_dir))
    assert own is not shared and own.model is not shared.model and own.gate is not shared.gate
    assert load_encoder(str(tiny_bert_dir)) is shared and model_key(str(tiny_bert_dir)) == own.name


def crafted(tmp_path, name, tiny_bert_dir, **config_changes) -> Path:
    """A copy of the tiny BERT with its config.json changed."""
    import json
    import shutil

    directory = Path(shutil.copytree(tiny_bert_dir, tmp_path / name))
    config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    (directory / "config.json").write_text(json.dumps({**config, **config_changes}), encoding="utf-8")
    return directory


def test_a_config_too_large_is_refused_before_anything_is_built(tmp_path, tiny_bert_dir):
    """vocab 200,000 x hidden 2,048 with a 10-byte weights file once took 58 s and 4 GB before it crashed."""
    import time

    from core.models.cache import load_encoder
    from core.models.checks import MAX_MODEL_PARAMS

    directory = crafted(tmp_path, "huge", tiny_bert_dir, vocab_size=200_000, hidden_size=2048,
                        num_attention_heads=16, intermediate_size=8192)
    (directory / "model.safetensors").write_bytes(b"0123456789")
    started = time.monotonic()
    with pytest.raises(LabError) as info:
        load_encoder(str(directory))
    assert info.value.code == "model_too_large" and time.monotonic() - started < 5
    message = info.value.message("en", markdown=False)
    assert "519 million" in message and f"{MAX_MODEL_PARAMS / 1e6:,.0f} million" in message
    assert "LAB_MAX_MODEL_PARAMS" in message


def test_the_presenter_sets_the_size_limit(monkeypatch, tmp_path, tiny_bert_dir):
    from core.models.cache import load_encoder
    from core.models.checks import MAX_PARAMS_ENV

    directory = crafted(tmp_path, "same", tiny_bert_dir)
    monkeypatch.setenv(MAX_PARAMS_ENV, "1e4")  # below the tiny model's 44,000 parameters
    with pytest.raises(LabError) as info:
        load_encoder(str(directory))
    assert info.value.code == "model_too_large"
    monkeypatch.setenv(MAX_PARAMS_ENV, "1e5")
    assert load_encoder(str(crafted(tmp_path, "again", tiny_bert_dir))).kind == "bert"


@pytest.mark.parametrize("model_type, changes", [
    ("bert", {}), ("roberta", {"type_vocab_size": 1}), ("electra", {"embedding_size": 16}),
    ("albert", {"embedding_size": 16, "num_hidden_layers": 4}), ("distilbert", {}), ("xlm-roberta", {})])
def test_the_parameter_estimate_bounds_the_real_count(model_type, changes):
    """From the config alone: exact for BERT (with its NSP head), at most 10% above for the others."""
    from transformers import AutoConfig, AutoModelForMaskedLM, BertForPreTraining

    from core.models.checks import estimated_parameters

    sizes = {"vocab_size": 300, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
             "intermediate_size": 64, "max_position_embeddings": 64}
    if model_type == "distilbert":
        sizes = {"vocab_size": 300, "dim": 32, "n_layers": 2, "n_heads": 2, "hidden_dim": 64,
                 "max_position_embeddings": 64}
    config = AutoConfig.for_model(model_type, **{**sizes, **changes})
    model = BertForPreTraining(config) if model_type == "bert" else AutoModelForMaskedLM.from_config(config)
    real = sum(p.numel() for p in model.parameters())
    estimate = estimated_parameters(config)
    assert estimate == real if model_type == "bert" else real <= estimate <= 1.1 * real, (estimate, real)


def test_a_tokenizer_larger_than_the_vocabulary_is_refused(tmp_path, tiny_bert_dir):
    """Model and weights of vocab_size = tokenizer - 20: a token id past the embeddings crashes the forward pass.
    (A vocabulary larger than the tokenizer is a padded one, loaded: tests/test_any_checkpoint.py.)"""
    from transformers import BertConfig, BertForPreTraining

    from core.models.cache import load_encoder

    directory = crafted(tmp_path, "vocab-20", tiny_bert_dir)
    config = BertConfig.from_pretrained(str(directory))
    config.vocab_size -= 20
    BertForPreTraining(config).save_pretrained(directory)
    with pytest.raises(LabError) as info:
        load_encoder(str(directory))
    assert info.value.code == "vocab_mismatch"
    assert f"vocab_size = {config.vocab_size}" in info.value.message("en", markdown=False)


def without_tensors(tmp_path, tiny_bert_dir, name, drop) -> Path:
    from safetensors.torch import load_file, save_file

    directory = crafted(tmp_path, name, tiny_bert_dir)
    weights = load_file(str(directory / "model.safetensors"))
    save_file({k: v for k, v in weights.items() if not drop(k)}, str(directory / "model.safetensors"),
              metadata={"format": "pt"})
    return directory


def test_weights_that_do_not_cover_the_model_are_refused(tmp_path, tiny_bert_dir):
    from core.models.cache import load_encoder

    with pytest.raises(LabError) as info:
        load_encoder(str(without_tensors(tmp_path, tiny_bert_dir, "layer", lambda k: ".layer.1." in k)))
    assert info.value.code == "weights_incomplete"
    # without the MLM head: vectors only, never the head's random numbers (tests/test_any_checkpoint.py)
    headless = load_encoder(str(without_tensors(tmp_path, tiny_bert_dir, "mlm-head",
                                                lambda k: k.startswith("cls.predictions"))))
    assert not headless.mlm_head
    # the next-sentence head and the pooler are optional: a plain masked LM, no NSP
    plain = load_encoder(str(without_tensors(tmp_path, tiny_bert_dir, "no-nsp",
                                             lambda k: "seq_relationship" in k or "pooler" in k)))
    assert plain.kind == "bert" and not plain.has_nsp


# what Markdown must never make a link of: typed, in the URL, in a file, in a model name
LINK_PAYLOADS = ["www.evil.example", "WWW.Evil.Example/x", "user@evil.example", "![i](http://evil.example/x.png)",
                 "see https://evil.example/a.", "苹果www.evil.example", "a@b.co"]


def test_the_link_patterns_are_streamlits():
    """core.guard.safe_text.GFM_AUTOLINKS are the patterns of the installed Streamlit's Markdown renderer."""
    import streamlit

    from core.guard.safe_text import GFM_AUTOLINKS

    bundles = list((Path(streamlit.__file__).parent / "static" / "static" / "js").glob("StreamlitMarkdown*.js"))
    source = "".join(b.read_text(encoding="utf-8") for b in bundles)
    for pattern in GFM_AUTOLINKS:
        assert pattern.pattern.replace("/", "\\/") in source, pattern.pattern


@pytest.mark.parametrize("payload", LINK_PAYLOADS)
def test_escaped_user_text_makes_no_link(payload):
    from apptest_support import gfm_links
    from core.guard.errors import MESSAGES
    from core.guard.safe_text import WORD_JOINER, md_escape

    assert gfm_links(payload) and gfm_links("x " + payload.replace(".", "\\."))  # escapes alone do not stop them
    shown = md_escape(payload)
    assert gfm_links(shown) == [] and shown.replace("\\", "").replace(WORD_JOINER, "") == payload.replace("\\", "")
    for code, templates in MESSAGES.items():
        params = {name: payload for name in re.findall(r"{(\w+)}", templates["en"])}
        for lang in ("zh", "en"):
            assert gfm_links(LabError(code, **params).message(lang, markdown=True)) == [], (code, lang)


@pytest.mark.parametrize("name", ["www.evil.example", "org/www.evil.example", "user@evil.example",
                                  "/models/a@evil.example"])
def test_model_names_that_would_be_links_are_refused(name):
    from core.models.catalogue import model_key
    from ui.sidebar import clean_model_id

    assert clean_model_id(name) is None
    with pytest.raises(LabError) as info:
        model_key(name)
    assert info.value.code == "unknown_model"


@pytest.mark.realmodel
def test_a_word_that_looks_like_a_link_stays_text():
    """The static page with the word www.evil.example and sentences holding it and an e-mail address."""
    from apptest_support import assert_no_exception, gfm_links, markdown_texts, page_app
    from core.guard.safe_text import WORD_JOINER

    text = "我在 www.evil.example 看到苹果。\n请写信给 user@evil.example 。"
    at = page_app(str(ROOT / "app_pages" / "static_vs_contextual" / "page.py"), "mini-bert-zh",
                  query={"word": "www.evil.example", "text": text})
    at.run()
    assert_no_exception(at)
    texts = markdown_texts(at)
    assert any("evil" in t.replace(WORD_JOINER, "") for t in texts)  # the word is shown
    assert [link for t in texts for link in gfm_links(t)] == []
