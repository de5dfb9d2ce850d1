"""ELMo's scalar mix as a trainable torch module, the formula of AllenNLP's ``ScalarMix``:

    mix = γ · Σ_j s_j · h_j,   s = softmax(w)

with w (one scalar per layer, initialised to 0, so s starts uniform) and γ (initialised to 1) learned with
the task. ``do_layer_norm`` standardises each layer first over all its unmasked numbers, one mean and one
variance per layer (AllenNLP's ``_do_layer_norm``). ``core.compute.mixing.scalar_mix`` is the same formula in numpy
for fixed weights; the tests check that the two agree. Bad arguments raise ``core.guard.errors.LabError``
(``bad_argument``, ``weights_count``), as the rest of the API does.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from ..guard.errors import LabError, type_name


def _tiny(dtype: torch.dtype) -> float:
    """AllenNLP's ``tiny_value_of_dtype``: what keeps 1/√variance finite."""
    return 1e-4 if dtype == torch.float16 else 1e-13


class ScalarMix(nn.Module):
    """ELMo's trainable scalar mix γ · Σ_j softmax(w)_j · h_j of ``mixture_size`` layers (AllenNLP's
    ``ScalarMix``, same arguments and numbers): w starts at ``initial_scalar_parameters`` (zeros: a uniform mix)
    and γ at 1, both learned with the task unless ``trainable=False``. ``do_layer_norm`` standardises each layer
    first over its real tokens (pass ``mask`` to ``forward`` for padded batches). ``weights``: s = softmax(w)."""

    def __init__(self, mixture_size: int, *, do_layer_norm: bool = False,
                 initial_scalar_parameters: Sequence[float] | None = None, trainable: bool = True):
        super().__init__()
        if isinstance(mixture_size, bool) or not isinstance(mixture_size, int):
            raise LabError("bad_argument", name="mixture_size", expected="int", given=type_name(mixture_size))
        if mixture_size < 1:
            raise LabError("bad_argument", name="mixture_size", expected="at least 1", given=str(mixture_size))
        initial = _finite_numbers(initial_scalar_parameters) if initial_scalar_parameters is not None \
            else [0.0] * mixture_size
        if len(initial) != mixture_size:
            raise LabError("weights_count", given=len(initial), layers=mixture_size)
        self.mixture_size = mixture_size
        self.do_layer_norm = do_layer_norm
        self.scalar_parameters = nn.ParameterList(
            nn.Parameter(torch.tensor([value]), requires_grad=trainable) for value in initial)
        self.gamma = nn.Parameter(torch.tensor([1.0]), requires_grad=trainable)

    @property
    def weights(self) -> torch.Tensor:
        """s = softmax(w), ``(mixture_size,)``."""
        return torch.softmax(torch.cat(list(self.scalar_parameters)), dim=0)

    def forward(self, tensors: Sequence[torch.Tensor] | torch.Tensor,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        """``tensors``: ``mixture_size`` tensors of shape ``(batch, time, dim)`` (or one stacked tensor
        ``(mixture_size, batch, time, dim)``); ``mask`` ``(batch, time)`` marks the real tokens, which alone
        set each layer's mean and variance under ``do_layer_norm`` (without a mask every position counts)."""
        try:
            layers = list(tensors)
        except TypeError as exc:  # not iterable, or a 0-d tensor
            raise LabError("bad_argument", name="tensors", expected="a sequence of tensors",
                           given=type_name(tensors)) from exc
        if len(layers) != self.mixture_size:
            raise LabError("bad_argument", name="tensors", expected=f"{self.mixture_size} layers (the mix's size)",
                           given=f"{len(layers)}")
        s = self.weights
        if self.do_layer_norm and mask is not None:
            _check_mask(mask, tuple(layers[0].shape[:-1]))
        if self.do_layer_norm:
            layers = [_layer_norm(h, mask) for h in layers]
        return self.gamma * sum(weight * h for weight, h in zip(s, layers))


def _finite_numbers(values) -> list[float]:
    """``initial_scalar_parameters`` as floats, every one finite (softmax of NaN or infinity is NaN)."""
    try:
        numbers = [float(value) for value in values]
    except (TypeError, ValueError) as exc:
        raise LabError("bad_argument", name="initial_scalar_parameters", expected="a list of numbers",
                       given=type_name(values)) from exc
    if not all(math.isfinite(number) for number in numbers):
        raise LabError("bad_argument", name="initial_scalar_parameters", expected="finite numbers",
                       given="NaN or infinity")
    return numbers


def _check_mask(mask, shape: tuple[int, ...]) -> None:
    """A mask of the positions' shape (a wrong one would broadcast silently), marking at least one real token."""
    if not isinstance(mask, torch.Tensor) or tuple(mask.shape) != shape:
        given = f"shape {tuple(mask.shape)}" if isinstance(mask, torch.Tensor) else type_name(mask)
        raise LabError("bad_argument", name="mask", expected=f"a tensor of shape {shape}", given=given)
    if not bool(mask.bool().any()):
        raise LabError("bad_argument", name="mask", expected="at least one real token", given="all padding")


def _layer_norm(tensor: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    if mask is None:
        mask = torch.ones(tensor.shape[:-1], dtype=tensor.dtype, device=tensor.device)
    broadcast = mask.to(tensor.dtype).unsqueeze(-1)
    count = broadcast.sum() * tensor.shape[-1]
    mean = (tensor * broadcast).sum() / count
    variance = (((tensor - mean) * broadcast) ** 2).sum() / count
    return (tensor - mean) / torch.sqrt(variance + _tiny(variance.dtype))
