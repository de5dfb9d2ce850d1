"""Shared fixtures: tiny randomly initialised BERT models built from a config (no network), a tiny models directory."""
from __future__ import annotations

import string
from pathlib import Path

import pytest
import torch

from model_support import build_tiny_static
from registry_support import count_loads

TINY_TEXT = ("我吃了一个苹果昨天发布新手机他背着包袱去北京心里的放下说相声抖银行在那边走行不"
             "今天天气很好。，！？水果公司的是了人")


def build_tiny_bert(directory: Path, *, with_nsp: bool = True, seed: int = 0, layers: int = 2, heads: int = 2,
                    extra_chars: str = "") -> Path:
    """Save a randomly initialised BERT (vocab: specials, ASCII pieces, a few hundred characters)."""
    from transformers import BertConfig, BertForMaskedLM, BertForPreTraining, BertTokenizerFast

    torch.manual_seed(seed)
    pieces = list(string.ascii_lowercase + string.digits)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + pieces + ["##" + p for p in pieces]
    vocab += [c for c in dict.fromkeys(TINY_TEXT + extra_chars) if c not in vocab]
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab=str(directory / "vocab.txt"), do_lower_case=True)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=layers, num_attention_heads=heads,
                        intermediate_size=64, max_position_embeddings=64)
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


@pytest.fixture(scope="module")
def skip_component_discovery():
    """AppTest scans every installed package for custom components on each new AppTest (≈10 s on a
    busy CPU); the pages use none, so page tests skip the scan."""
    from streamlit.components.v2.component_manager import BidiComponentManager

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(BidiComponentManager, "discover_and_register_components", lambda self, *a, **k: None)
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



# ---- a models directory for the page tests ----------------------------------------------------------
def reset_model_caches():
    import streamlit as st

    from core.models import cache

    cache.clear()
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture
def models_dir(tmp_path, monkeypatch):
    """assets/models replaced by: a tiny word2vec-zh, no mini-elmo-zh (add it with model_support.link_real_elmo)."""
    from core.models import catalogue

    directory = tmp_path / "models"
    build_tiny_static(directory / "word2vec-zh")
    monkeypatch.setattr(catalogue, "MODELS_DIR", directory)  # what the catalogue lists and the loaders read
    reset_model_caches()
    yield directory
    reset_model_caches()


@pytest.fixture
def clean_registry(monkeypatch):
    """The model cache emptied for the test and restored afterwards (the models loaded before stay loaded for
    the tests after it)."""
    from core.models import cache

    for name in ("_cache", "_failures", "_load_locks"):
        monkeypatch.setattr(cache, name, type(getattr(cache, name))())


@pytest.fixture
def model_loads(monkeypatch):
    """How often each model key is really loaded during the test (a Counter; ``registry_support.count_loads``)."""
    from core.models import loaders

    return count_loads(loaders, monkeypatch.setattr)


@pytest.fixture
def encode_calls(monkeypatch):
    """How many times a contextual model really runs (BERT or ELMo forward passes)."""
    from core.models.encoders import BertEncoder, ElmoEncoder

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
    monkeypatch.setattr(hub, "_hub_probe", [])
    yield url, accepted
    stop.set()
    thread.join(5)
