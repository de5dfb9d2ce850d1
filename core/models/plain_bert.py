"""BERT's forward pass (Devlin et al., 2019) in plain torch, for the embedded BERT.

transformers' modelling modules import ``torch.distributed.tensor``, ``torch._dynamo`` and SciPy's optimiser before
they can run a model: 2.5 s of a 6 s CLI answer on two cores (issue #41), for a model that needs none of it.
The modules here keep transformers' names (``bert.encoder.layer.0.attention.self.query`` …), so the shipped
safetensors file loads in both, and a state dict moves between them (the transfer experiment fine-tunes a copy in
transformers). Tests check every output against transformers' ``BertForPreTraining`` (eager attention).

Inference only: absolute positions, post-layer-norm, tied output embeddings, no dropout, no cache. A config
that asks for anything else is not :func:`supported` and goes through transformers.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn
from transformers import BertConfig  # the configuration only: no modelling module

ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {  # transformers' names for these functions
    "gelu": nn.functional.gelu,
    "relu": nn.functional.relu,
    "gelu_new": lambda x: nn.functional.gelu(x, approximate="tanh"),
    "gelu_pytorch_tanh": lambda x: nn.functional.gelu(x, approximate="tanh"),
}
# Saved by some versions of transformers, recomputed here: position ids, the output layer tied to the embeddings.
RECOMPUTED = ("bert.embeddings.position_ids", "cls.predictions.decoder.weight", "cls.predictions.decoder.bias")


def supported(directory: Path) -> bool:
    """Whether the checkpoint in ``directory`` is one this module computes exactly as transformers does."""
    config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    return (config.get("model_type") == "bert" and config.get("hidden_act", "gelu") in ACTIVATIONS
            and config.get("position_embedding_type", "absolute") == "absolute"
            and not config.get("is_decoder") and not config.get("add_cross_attention")
            and config.get("tie_word_embeddings", True)
            and config["hidden_size"] % config["num_attention_heads"] == 0)


class Outputs(dict):
    """A forward pass's tensors by name, also read as attributes (as transformers' ``ModelOutput``)."""

    def __getattr__(self, name: str):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class BertEmbeddings(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        summed = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        return self.LayerNorm(summed + self.position_embeddings(positions))


class BertSelfAttention(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.heads = config.num_attention_heads
        self.query = nn.Linear(config.hidden_size, config.hidden_size)
        self.key = nn.Linear(config.hidden_size, config.hidden_size)
        self.value = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden: torch.Tensor, additive_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(mixed values, attention probabilities (batch, heads, queries, keys)): softmax(QKᵀ/√d + mask)·V."""
        batch, length, width = hidden.shape
        split = (batch, length, self.heads, width // self.heads)
        query, key, value = (part(hidden).view(split).transpose(1, 2) for part in (self.query, self.key, self.value))
        scores = torch.matmul(query, key.transpose(2, 3)) * (width // self.heads) ** -0.5 + additive_mask
        probabilities = torch.softmax(scores, dim=-1)
        mixed = torch.matmul(probabilities, value).transpose(1, 2).reshape(batch, length, width)
        return mixed, probabilities


class BertResidual(nn.Module):
    """LayerNorm(dense(x) + residual): the output of the attention block and of the feed-forward block."""

    def __init__(self, config: BertConfig, width_in: int):
        super().__init__()
        self.dense = nn.Linear(width_in, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, hidden: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dense(hidden) + residual)


class BertAttention(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.self = BertSelfAttention(config)
        self.output = BertResidual(config, config.hidden_size)


class BertIntermediate(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)
        self.activation = ACTIVATIONS[config.hidden_act]

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.activation(self.dense(hidden))


class BertLayer(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.attention = BertAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertResidual(config, config.intermediate_size)

    def forward(self, hidden: torch.Tensor, additive_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mixed, probabilities = self.attention.self(hidden, additive_mask)
        attended = self.attention.output(mixed, hidden)
        return self.output(self.intermediate(attended), attended), probabilities


class BertEncoderStack(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(config) for _ in range(config.num_hidden_layers))


class BertPooler(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dense(hidden[:, 0]))


class BertModel(nn.Module):
    """The encoder: embeddings, the layers, and (when the checkpoint has it) the pooler of [CLS]."""

    def __init__(self, config: BertConfig, *, pooler: bool):
        super().__init__()
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoderStack(config)
        self.pooler = BertPooler(config) if pooler else None

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                token_type_ids: torch.Tensor | None = None, *, output_hidden_states: bool = False,
                output_attentions: bool = False) -> Outputs:
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        hidden = self.embeddings(input_ids, token_type_ids)
        # padding keys get the dtype's most negative number, as transformers' eager attention does
        additive_mask = (1.0 - attention_mask[:, None, None, :].to(hidden.dtype)) * torch.finfo(hidden.dtype).min
        states, attentions = [hidden], []
        for layer in self.encoder.layer:
            hidden, probabilities = layer(hidden, additive_mask)
            states.append(hidden)
            attentions.append(probabilities)
        outputs = Outputs(last_hidden_state=hidden)
        if self.pooler is not None:
            outputs["pooler_output"] = self.pooler(hidden)
        if output_hidden_states:
            outputs["hidden_states"] = tuple(states)
        if output_attentions:
            outputs["attentions"] = tuple(attentions)
        return outputs


class BertPredictionHeadTransform(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.activation = ACTIVATIONS[config.hidden_act]
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.activation(self.dense(hidden)))


class BertLMPredictionHead(nn.Module):
    """The masked-LM head; its output layer is the input embeddings (tied), plus a bias of its own."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.transform = BertPredictionHeadTransform(config)
        self.bias = nn.Parameter(torch.zeros(config.vocab_size))


class BertPreTrainingHeads(nn.Module):
    def __init__(self, config: BertConfig, *, next_sentence: bool):
        super().__init__()
        self.predictions = BertLMPredictionHead(config)
        self.seq_relationship = nn.Linear(config.hidden_size, 2) if next_sentence else None


class BertForPreTraining(nn.Module):
    """BERT with its masked-LM head and, when the checkpoint has them, the pooler and next-sentence head.

    Answers like transformers' model where the lab reads it: ``config``, ``base_model``, ``cls``, ``device``,
    ``dtype``, and outputs with ``prediction_logits``, ``hidden_states``, ``attentions``."""

    def __init__(self, config: BertConfig, *, next_sentence: bool):
        super().__init__()
        self.config = config
        self.bert = BertModel(config, pooler=next_sentence)
        self.cls = BertPreTrainingHeads(config, next_sentence=next_sentence)

    @property
    def base_model(self) -> BertModel:
        return self.bert

    @property
    def device(self) -> torch.device:
        return self.cls.predictions.bias.device

    @property
    def dtype(self) -> torch.dtype:
        return self.cls.predictions.bias.dtype

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                token_type_ids: torch.Tensor | None = None, *, output_hidden_states: bool = False,
                output_attentions: bool = False) -> Outputs:
        outputs = self.bert(input_ids, attention_mask, token_type_ids, output_hidden_states=output_hidden_states,
                            output_attentions=output_attentions)
        head = self.cls.predictions
        transformed = head.transform(outputs.last_hidden_state)
        outputs["prediction_logits"] = nn.functional.linear(transformed, self.bert.embeddings.word_embeddings.weight,
                                                            head.bias)
        if self.cls.seq_relationship is not None:
            outputs["seq_relationship_logits"] = self.cls.seq_relationship(outputs.pooler_output)
        return outputs


def read_checkpoint(directory: Path) -> tuple[BertForPreTraining, list[str]]:
    """The float32 model of ``directory``'s ``config.json`` and ``model.safetensors`` (safetensors only), and the
    names of the weights it needs that the file lacks (empty when the file covers the model). The next-sentence
    head and pooler are built when the file has them."""
    from safetensors.torch import load_file

    weights = load_file(str(directory / "model.safetensors"))
    for name in RECOMPUTED:
        weights.pop(name, None)
    next_sentence = "cls.seq_relationship.weight" in weights
    model = BertForPreTraining(BertConfig.from_pretrained(str(directory)), next_sentence=next_sentence)
    missing, unexpected = model.load_state_dict(weights, strict=False)
    if unexpected:
        raise ValueError(f"weights this BERT does not have: {', '.join(sorted(unexpected)[:3])}")
    return model.eval(), list(missing)

