"""core.transfer.lora: LoRA through peft on the real embedded mini-bert-zh (a few reviews, two steps), and on the
tiny BERT."""
from __future__ import annotations

import pytest
import torch

from core import transfer
from core.transfer import lora

CONFIG = transfer.TransferConfig(n_train=16, n_test=16, max_chars=30, steps=2, batch_size=8, eval_points=1,
                                 threads=1, seed=5)


class KeepWeights(lora.AddLora):
    """AddLora that also copies every weight right after peft wrapped the model, to compare after training."""

    def __call__(self, model):
        model = super().__call__(model)
        self.before = {n: p.detach().clone() for n, p in model.named_parameters()}
        return model


@pytest.fixture(scope="module")
def data():
    return transfer.sample_dataset(CONFIG)


@pytest.fixture(scope="module")
def run(bert, data):
    """LoRA on mini-bert-zh: (result, hook with the trained model, the cached encoder's weights before)."""
    cached = {k: v.clone() for k, v in bert.model.state_dict().items()}
    hook = KeepWeights(lora.DEFAULT_LORA)
    result = lora.lora_fine_tune(bert, data, CONFIG, hook=hook)
    return result, hook, cached


def test_only_the_adapters_and_the_head_train(run, bert):
    _, hook, _ = run
    trained = [n for n, p in hook.model.named_parameters() if p.requires_grad]
    assert trained and all(".lora_A." in n or ".lora_B." in n or ".classifier.modules_to_save." in n for n in trained)
    layers = bert.model.config.num_hidden_layers
    for target in lora.DEFAULT_LORA.targets:  # an A and a B beside query and value in every layer
        assert sum(f".{target}.lora_A." in n for n in trained) == layers
        assert sum(f".{target}.lora_B." in n for n in trained) == layers


def test_pretrained_weights_stay_and_adapters_move(run):
    _, hook, _ = run
    after = dict(hook.model.named_parameters())
    frozen = [n for n, p in after.items() if not p.requires_grad]
    assert any(".attention.self.query.base_layer." in n for n in frozen)
    assert all(torch.equal(hook.before[n], after[n]) for n in frozen)
    lora_b = [n for n in after if ".lora_B." in n]
    assert all(not hook.before[n].any() for n in lora_b)  # B starts at zero: the model starts as pre-trained
    assert any(after[n].detach().abs().sum() > 0 for n in lora_b)  # and training moved it


def test_the_cached_encoder_is_untouched(run, bert):
    _, _, cached = run
    assert all(torch.equal(cached[k], v) for k, v in bert.model.state_dict().items())


def test_counts_and_accuracy(run, bert):
    result, _, _ = run
    settings, config = lora.DEFAULT_LORA, bert.model.config
    hidden, layers = config.hidden_size, config.num_hidden_layers
    assert result["adapter_params"] == layers * len(settings.targets) * settings.r * (hidden + hidden)
    assert result["head_params"] == hidden * 2 + 2
    assert result["trained_params"] == result["adapter_params"] + result["head_params"]
    assert result["frozen_params"] == result["encoder_params"] == transfer.count_params(bert.model.base_model)
    full = result["encoder_params"] + result["head_params"]
    assert result["trained_params"] < 0.01 * full  # < 1% of what full fine-tuning trains
    assert [p["step"] for p in result["curve"]] == [0, 2] and len(result["losses"]) == 2
    for acc in (result["accuracy"], result["train_accuracy"]):
        assert 0.0 <= acc <= 1.0 and abs(acc * 16 - round(acc * 16)) < 1e-9  # a share of 16 reviews
    assert result["settings"]["lr"] == settings.lr and result["cpu_seconds"] >= 0


def test_lora_is_seeded(tiny_bert, data):
    config = CONFIG.replace(steps=3)
    a, b = (lora.lora_fine_tune(tiny_bert, data, config) for _ in range(2))
    assert a["losses"] == b["losses"] and a["accuracy"] == b["accuracy"]


def test_validation_split_leaves_the_test_reviews_out(data):
    split = transfer.validation_split(data, CONFIG.val_share)
    assert len(split.test_texts) == 4 and split.train_texts + split.test_texts == data.train_texts
    assert split.train_labels + split.test_labels == data.train_labels
    assert not set(split.test_texts) & set(data.test_texts)


def test_sweep_chooses_the_best_validation_accuracy(tiny_bert):
    lines = []
    choice = lora.sweep(tiny_bert, [1e-3, 1e-2], CONFIG.replace(n_train=16, n_test=8), log=lines.append)
    assert [float(v) for v in choice["val_accuracy"]] == [1e-3, 1e-2] and len(lines) == 2
    scores = list(choice["val_accuracy"].values())
    assert choice["chosen"] == [1e-3, 1e-2][scores.index(max(scores))] and choice["n_val"] == 4
