"""The library as a researcher installs it: build the wheel, install it into a fresh virtualenv in a temporary
directory, and run the analysis block of docs/code.md there, outside the clone."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.subprocess  # builds the wheel and installs it into a fresh virtualenv


def doc_block() -> str:
    """The block of docs/code.md ("Python API and notebook") that starts ``from elmo_bert_lab.interface import``."""
    doc = (ROOT / "docs" / "code.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", doc, flags=re.DOTALL)
    return next(block for block in blocks if block.startswith("from elmo_bert_lab.interface import"))


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"  # setuptools builds in the source tree: a copy keeps build/ out of the clone
    for part in ("core", "assets"):
        shutil.copytree(ROOT / part, source / part, ignore=shutil.ignore_patterns("__pycache__", ".ckpt"))
    for part in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / part, source / part)
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(work / "dist")], check=True, timeout=300, cwd=work)
    wheel = next((work / "dist").glob("elmo_bert_lab-*.whl"))
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
                    str(wheel)], check=True, timeout=300, cwd=work)
    # The dependencies (torch, transformers, …) are the ones this environment already has: a .pth file lends
    # them, instead of downloading several GB again. The package itself comes only from the wheel.
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "lab_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return venv


def run_outside(venv: Path, tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env=env, timeout=600)


def test_doc_block_runs_from_a_fresh_virtualenv(fresh_venv, tmp_path):
    probe = doc_block() + (
        "\nimport json, importlib.util, elmo_bert_lab\n"
        "print(json.dumps({'package': elmo_bert_lab.__file__, 'core': importlib.util.find_spec('core') is not None,"
        " 'first': api.fill_mask(bert, '他每天早上都喝一杯牛[MASK]。').masks[0].candidates[0].token,"
        " 'token_shape': list(every_token.sentences[0].layers.shape)}))\n")
    done = run_outside(fresh_venv, tmp_path, probe)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["package"].startswith(str(fresh_venv))
    assert not result["core"]  # no bare `core` package: the library has a name of its own
    assert result["first"] == "奶"
    assert result["token_shape"] == [5, 10, 256]
    assert (tmp_path / "projector" / "vectors.tsv").exists()


def test_console_command_lists_the_carried_models(fresh_venv, tmp_path):
    done = subprocess.run([str(fresh_venv / "bin" / "elmo-bert-lab"), "models"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    models = {m["name"]: m["available"] for m in json.loads(done.stdout)}
    assert models == {"mini-bert-zh": True, "mini-elmo-zh": True, "word2vec-zh": True}


def test_the_notebook_runs_from_the_installed_wheel(fresh_venv, tmp_path, monkeypatch):
    """examples/explore.ipynb copied outside the clone and run in a kernel of the fresh virtualenv: it imports the
    lab as ``elmo_bert_lab`` (the wheel's), runs every cell on the wheel's embedded models, and its HTML export
    writes no formula for MathJax (nbconvert's MathJax comes from a CDN: offline it would stay ``$…$``)."""
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    kernels = tmp_path / "jupyter" / "kernels" / "lab-wheel"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [str(fresh_venv / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "the wheel's virtualenv", "language": "python",
        "env": {"HF_HUB_OFFLINE": "1", "HOME": str(tmp_path)}}), encoding="utf-8")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    outside = tmp_path / "work"
    outside.mkdir()
    notebook = nbformat.read(ROOT / "examples" / "explore.ipynb", as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="lab-wheel",
                   resources={"metadata": {"path": str(outside)}}).execute()  # a failing cell raises here
    texts = "\n".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                      for output in cell.outputs)
    assert "the lab: elmo_bert_lab" in texts
    assert "[0.4 0.6 1. ]" in texts and "[('奶'," in texts
    warnings = [output["text"] for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
                if output.get("name") == "stderr" and "Warning" in output["text"]]
    assert not warnings, warnings  # e.g. tqdm's "IProgress not found" without ipywidgets
    page, _ = HTMLExporter().from_notebook_node(notebook)
    markdown = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    assert "$" not in markdown and "γ · Σⱼ sⱼ hⱼ = [0.4, 0.6, 1.0]" in page
    assert page.count("Plotly.newPlot(") == 7


RESEARCHER_SCRIPT = r'''
import json, shutil, subprocess, sys
from pathlib import Path
import numpy as np
import pandas as pd
import torch
from transformers import BertForSequenceClassification, BertModel
from elmo_bert_lab.interface import api

tiny, work = Path(sys.argv[1]), Path(sys.argv[2])
tokenizer_files = [p for p in tiny.iterdir() if p.name not in ("model.safetensors", "config.json")]
folders = {}
for name, build in (("encoder", lambda: BertModel.from_pretrained(str(tiny))),
                    ("classifier", lambda: BertForSequenceClassification.from_pretrained(str(tiny), num_labels=3))):
    build().save_pretrained(work / name, safe_serialization=True)
    for file in tokenizer_files:
        shutil.copy(file, work / name / file.name)
    folders[name] = str(work / name)
sentences = ["我吃了一个苹果。", "苹果昨天发布了新手机。"]
shapes = {name: list(api.embed(folder, sentences, "苹果").stacked().shape) for name, folder in folders.items()}
before = api.token_vectors(folders["encoder"], sentences[:1]).sentences[0].layers
# the researcher trains on and saves into the same folder: the next call reads the new weights
model = BertModel.from_pretrained(folders["encoder"])
with torch.no_grad():
    model.embeddings.word_embeddings.weight.mul_(2.0)
model.save_pretrained(folders["encoder"], safe_serialization=True)
after = api.token_vectors(folders["encoder"], sentences[:1]).sentences[0].layers
# a corpus with a line longer than the model takes, embedded by the console command into Parquet
filler = "今天天气很好他背着包袱去北京心里的放下说相声"
corpus = work / "corpus.txt"
corpus.write_text("苹果" + filler * 3 + "苹果" + filler * 3 + "苹果。\n我吃了一个苹果。\n", encoding="utf-8")
done = subprocess.run(["elmo-bert-lab", "embed", "--model", folders["classifier"], "--word", "苹果", "--input",
                       str(corpus), "--format", "parquet", "--out", str(work / "vectors.parquet")],
                      capture_output=True, text=True)
table = pd.read_parquet(work / "vectors.parquet") if done.returncode == 0 else None
print(json.dumps({"shapes": shapes, "changed": bool(np.abs(after - before).max() > 1e-3), "cli": done.returncode,
                  "stderr": done.stderr[-2000:], "rows": None if table is None else len(table),
                  "sentences": None if table is None else sorted(set(table["sentence_index"].tolist()))}))
'''


def test_a_researchers_script_from_the_installed_wheel(fresh_venv, tmp_path, tiny_bert_dir):
    """Issue #55's done-when, outside the clone in the wheel's fresh virtualenv (pyarrow installed: the [parquet]
    extra): an encoder-only and a sequence-classification checkpoint built here give their vectors; the encoder saved
    again into its folder gives the new weights' vectors; a corpus with a line longer than the model takes goes
    through the console command into Parquet under the stated long-text policy, every occurrence kept."""
    work = tmp_path / "work"
    work.mkdir()
    env = {"PATH": f"{fresh_venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([str(fresh_venv / "bin" / "python"), "-c", RESEARCHER_SCRIPT, str(tiny_bert_dir), str(work)],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["shapes"] == {"encoder": [3, 2, 32], "classifier": [3, 2, 32]}
    assert result["changed"], "the folder saved again was read again"
    assert result["cli"] == 0, result["stderr"]
    assert "longer than" in result["stderr"] and "overlapping windows" in result["stderr"]
    # three occurrences in the long line and one in the short, each with every layer (3 layers)
    assert result["sentences"] == [0, 1] and result["rows"] == 4 * 3
