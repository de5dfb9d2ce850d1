"""A small ELMo-style bidirectional language model (Peters et al., 2018, §3.1).

Character tokens share one context-independent embedding layer. A forward and a backward stack
of L LSTM layers (each followed by a linear projection, with a residual connection from the
second layer up) read the sentence in the two directions. Both directions
predict their next token through one shared softmax, tied to the token embeddings.

For every token the model yields the 2L+1 representations of the lecture: the token layer
x_k, and the forward and backward states of each layer j = 1..L. The L+1 vectors that the
ELMo scalar mix combines are h_{k,0} = [x_k; x_k] (the token layer duplicated to the same
width) and h_{k,j} = [forward_j; backward_j].
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn


@dataclass
class BiLMConfig:
    vocab_size: int
    embed_dim: int = 256
    hidden_dim: int = 512  # LSTM cell size, projected back to embed_dim
    num_layers: int = 2
    dropout: float = 0.1
    bos_id: int = 2  # [CLS] plays <S>
    eos_id: int = 3  # [SEP] plays </S>
    pad_id: int = 0


class _DirectionalStack(nn.Module):
    def __init__(self, config: BiLMConfig):
        super().__init__()
        # The projection is applied to each layer's output rather than inside the recurrence
        # (torch's proj_size): oneDNN has no fused kernel for projected LSTMs, which is 3x slower on CPU.
        self.layers = nn.ModuleList(
            nn.LSTM(config.embed_dim, config.hidden_dim, batch_first=True) for _ in range(config.num_layers)
        )
        self.projections = nn.ModuleList(
            nn.Linear(config.hidden_dim, config.embed_dim) for _ in range(config.num_layers)
        )
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        outputs = []
        for index, (lstm, projection) in enumerate(zip(self.layers, self.projections)):
            y = projection(lstm(self.dropout(x))[0])
            if index > 0:
                y = y + x  # residual connection between LSTM layers, as in ELMo
            outputs.append(y)
            x = y
        return outputs


class BiLM(nn.Module):
    def __init__(self, config: BiLMConfig):
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(config.vocab_size, config.embed_dim, padding_idx=config.pad_id)
        self.forward_stack = _DirectionalStack(config)
        self.backward_stack = _DirectionalStack(config)
        self.softmax_bias = nn.Parameter(torch.zeros(config.vocab_size))

    def representations(self, ids: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, list, list]:
        """Token layer and per-layer forward/backward states, each (batch, time, embed_dim).

        The backward stack reads each sequence right-to-left; padding stays at the end because
        only the first ``length`` positions of every row are reversed.
        """
        x = self.embedding(ids)
        forward = self.forward_stack(x)
        backward_rev = self.backward_stack(_reverse_padded(x, lengths))
        backward = [_reverse_padded(h, lengths) for h in backward_rev]
        return x, forward, backward

    def layer_vectors(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """The L+1 vectors the scalar mix combines: (L+1, batch, time, 2*embed_dim)."""
        x, forward, backward = self.representations(ids, lengths)
        layers = [torch.cat([x, x], dim=-1)] + [torch.cat([f, b], dim=-1) for f, b in zip(forward, backward)]
        return torch.stack(layers)

    def logits(self, states: torch.Tensor) -> torch.Tensor:
        """Shared softmax, tied to the token embeddings."""
        return states @ self.embedding.weight.T + self.softmax_bias

    def lm_losses(self, ids: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, int]:
        """Mean forward and backward next-token cross-entropy over real positions.

        ``ids`` are [BOS] tokens [EOS] (padded); the forward LM predicts ids[t+1] from position t,
        the backward LM predicts ids[t-1].
        """
        _, forward, backward = self.representations(ids, lengths)
        time_steps = ids.shape[1]
        valid = torch.arange(time_steps, device=ids.device)[None, :] < lengths[:, None]
        fwd_mask = valid[:, :-1] & valid[:, 1:]
        fwd_states = forward[-1][:, :-1][fwd_mask]
        fwd_targets = ids[:, 1:][fwd_mask]
        bwd_states = backward[-1][:, 1:][fwd_mask]
        bwd_targets = ids[:, :-1][fwd_mask]
        fwd_loss = nn.functional.cross_entropy(self.logits(fwd_states).float(), fwd_targets)
        bwd_loss = nn.functional.cross_entropy(self.logits(bwd_states).float(), bwd_targets)
        return fwd_loss, bwd_loss, int(fwd_mask.sum())

    def save(self, directory: Path | str, vocab: list[str]) -> None:
        """fp16 safetensors + config.json + vocab.txt: no pickle anywhere."""
        from safetensors.torch import save_file

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        tensors = {k: v.detach().to("cpu", torch.float16).contiguous() for k, v in self.state_dict().items()}
        save_file(tensors, str(directory / "model.safetensors"))
        config = {"model_type": "elmo-bilm", **asdict(self.config)}
        (directory / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        (directory / "vocab.txt").write_text("".join(t + "\n" for t in vocab), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path | str) -> BiLM:
        from safetensors.torch import load_file

        directory = Path(directory)
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        config.pop("model_type", None)
        # .float(): a BERT loading in another thread (transformers sets torch's process-wide default dtype to
        # the checkpoint's fp16 while it builds the model) must not leave these parameters in fp16
        model = cls(BiLMConfig(**config)).float()
        state = {k: v.float() for k, v in load_file(str(directory / "model.safetensors")).items()}
        model.load_state_dict(state)
        return model.eval()


def _reverse_padded(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse the first ``lengths[i]`` steps of each row, leaving padding in place."""
    time_steps = x.shape[1]
    positions = torch.arange(time_steps, device=x.device)[None, :]
    lengths = lengths.to(x.device)[:, None]
    index = torch.where(positions < lengths, lengths - 1 - positions, positions)
    return x.gather(1, index[:, :, None].expand_as(x))
