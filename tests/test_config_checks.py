"""A model directory's config.json checked for type and range before anything is built (issue #53, item 1): a
negative layer count passed the size limit and the server built gigabytes, kept by the remembered failure."""
from __future__ import annotations

import gc
import json
import shutil
import time
import warnings
from pathlib import Path

import pytest

from core.guard.errors import LabError


@pytest.fixture(autouse=True)
def fresh_cache():
    from core.models import cache

    cache.clear()
    yield
    cache.clear()


def crafted(tmp_path: Path, tiny_bert_dir: Path, name: str, *, weights: bytes | None = b"0123456789",
            **changes) -> Path:
    """The tiny BERT with ``changes`` in its config.json and, by default, a 10-byte weights file: a load that
    got as far as the weights would have built the whole model first."""
    directory = Path(shutil.copytree(tiny_bert_dir, tmp_path / name))
    config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    (directory / "config.json").write_text(json.dumps({**config, **changes}), encoding="utf-8")
    if weights is not None:
        (directory / "model.safetensors").write_bytes(weights)
    return directory


@pytest.mark.parametrize("changes, code, field", [
    ({"num_hidden_layers": -1000, "max_position_embeddings": 1_500_000}, "config_not_size", "num_hidden_layers"),
    ({"num_hidden_layers": -1}, "config_not_size", "num_hidden_layers"),
    ({"hidden_size": 0}, "config_not_size", "hidden_size"),
    ({"num_attention_heads": 0}, "config_not_size", "num_attention_heads"),
    ({"intermediate_size": -64}, "config_not_size", "intermediate_size"),
    ({"vocab_size": -5}, "config_not_size", "vocab_size"),
    ({"max_position_embeddings": 0}, "config_not_size", "max_position_embeddings"),
    ({"type_vocab_size": 0}, "config_not_size", "type_vocab_size"),
    ({"hidden_dropout_prob": float("nan")}, "config_bad_rate", "hidden_dropout_prob"),
    ({"attention_probs_dropout_prob": 1.0}, "config_bad_rate", "attention_probs_dropout_prob"),
    ({"hidden_dropout_prob": -0.1}, "config_bad_rate", "hidden_dropout_prob"),
    ({"classifier_dropout": float("inf")}, "config_bad_rate", "classifier_dropout"),
    ({"num_attention_heads": 3}, "config_heads", "3"),
])
def test_a_config_out_of_range_is_refused_before_anything_is_built(tmp_path, tiny_bert_dir, changes, code, field):
    """On main: -1000 layers passed the size limit (a negative estimate) and built the model, -1 loaded a model of
    no layers, zero heads was "integer modulo by zero", NaN dropout failed at the first sentence."""
    from core.models.cache import load_encoder

    directory = crafted(tmp_path, tiny_bert_dir, "crafted", **changes)
    started = time.monotonic()
    with pytest.raises(LabError) as info:
        load_encoder(str(directory))
    assert info.value.code == code and time.monotonic() - started < 5
    for lang in ("en", "zh"):
        message = info.value.message(lang, markdown=False)
        assert field in message and "crafted" in message, message


def test_a_valid_config_still_loads(tmp_path, tiny_bert_dir):
    """Dropout 0 and null (no classifier dropout) are rates; the tiny model's sizes are sizes."""
    from core.models.cache import load_encoder

    directory = crafted(tmp_path, tiny_bert_dir, "valid", weights=None, hidden_dropout_prob=0,
                        classifier_dropout=None)
    assert load_encoder(str(directory)).kind == "bert"


def test_distilbert_names_are_checked_too():
    from transformers import AutoConfig

    from core.models.checks import check_config

    sizes = {"vocab_size": 300, "dim": 32, "n_layers": 2, "n_heads": 2, "hidden_dim": 64}
    check_config(AutoConfig.for_model("distilbert", **sizes), "distil")
    for changes, code in (({"n_layers": -3}, "config_not_size"), ({"n_heads": 5}, "config_heads"),
                          ({"attention_dropout": float("nan")}, "config_bad_rate")):
        bad = AutoConfig.for_model("distilbert", **{**sizes, **changes})
        with pytest.raises(LabError) as info:
            check_config(bad, "distil")
        assert info.value.code == code, changes


def _models_of(directory: Path) -> int:
    """Live transformers models built from ``directory`` (after a full collection)."""
    from transformers import PreTrainedModel

    gc.collect()
    with warnings.catch_warnings():  # isinstance on every object wakes torch's deprecated module attributes
        warnings.simplefilter("ignore")
        return sum(1 for o in gc.get_objects()
                   if isinstance(o, PreTrainedModel) and getattr(o, "name_or_path", None) == str(directory))


def test_a_refused_load_keeps_no_model(tmp_path, tiny_bert_dir):
    """A load refused after the model was built (weights of another shape) is remembered for a minute; on main
    the remembered error's traceback held the built model, gigabytes for a crafted one."""
    from transformers import BertConfig, BertForPreTraining

    from core.models import cache

    directory = crafted(tmp_path, tiny_bert_dir, "mismatched", weights=None)
    config = BertConfig.from_pretrained(str(directory))
    config.intermediate_size = 48
    BertForPreTraining(config).save_pretrained(directory)
    (directory / "config.json").write_text((tiny_bert_dir / "config.json").read_text(encoding="utf-8"),
                                           encoding="utf-8")  # the weights no longer match the config
    try:
        cache.load_encoder(str(directory))
    except LabError as err:
        code = err.code
    assert code == "weights_incomplete" and cache.bookkeeping().failed
    assert _models_of(directory) == 0
    with pytest.raises(LabError):  # the remembered failure is still answered
        cache.load_encoder(str(directory))
