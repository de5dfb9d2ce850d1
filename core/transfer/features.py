"""Feature-based transfer: a FROZEN encoder only turns each review into a vector, and a logistic regression
(scikit-learn) is trained on those vectors. mini-elmo-zh: the uniform scalar mix of its L+1 layers
(core.mixing), mean-pooled over the review; mini-bert-zh: every layer's [CLS] vector or its token mean.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..mixing import scalar_mix

POOLINGS = ("cls", "mean")


def _content_mask(special: Sequence[bool]) -> np.ndarray:
    mask = ~np.asarray(special, dtype=bool)
    if not mask.any():  # an all-special sequence cannot happen for real text; keep it defined anyway
        mask[:] = True
    return mask


def _fit(encoder, texts: Sequence[str]) -> list[str]:
    """Cut texts to the model's length limit (character models: one token per character + 2 specials)."""
    limit = max(1, int(getattr(encoder, "max_tokens", 512)) - 2)
    return [text[:limit] for text in texts]


def elmo_features(encoder, texts: Sequence[str], *, batch_size: int = 64,
                  progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """(n, dim): the uniform scalar mix s_j = 1/(L+1), γ = 1 of every layer, mean over the review's tokens."""
    weights = np.zeros(encoder.num_layers)  # equal pre-softmax weights: softmax -> uniform
    texts = _fit(encoder, texts)
    rows = []
    for start in range(0, len(texts), batch_size):
        for enc in encoder.encode(list(texts[start:start + batch_size])):
            mixed = scalar_mix(enc.layers, weights, 1.0, pre_softmax=True)  # (n_tokens, dim)
            rows.append(mixed[_content_mask(enc.special)].mean(axis=0))
        if progress:
            progress(min(start + batch_size, len(texts)), len(texts))
    return np.stack(rows).astype(np.float32)


def bert_features(encoder, texts: Sequence[str], *, batch_size: int = 64,
                  progress: Callable[[int, int], None] | None = None) -> dict[str, np.ndarray]:
    """``{"cls": (L+1, n, dim), "mean": (L+1, n, dim)}``: every layer's [CLS] vector and token mean."""
    cls_rows, mean_rows = [], []
    texts = _fit(encoder, texts)
    for start in range(0, len(texts), batch_size):
        for enc in encoder.encode(list(texts[start:start + batch_size])):
            cls_rows.append(enc.layers[:, 0, :])
            mean_rows.append(enc.layers[:, _content_mask(enc.special), :].mean(axis=1))
        if progress:
            progress(min(start + batch_size, len(texts)), len(texts))
    return {"cls": np.stack(cls_rows, axis=1).astype(np.float32),
            "mean": np.stack(mean_rows, axis=1).astype(np.float32)}


def fit_logistic(train_x: np.ndarray, train_y: Sequence[int], test_x: np.ndarray, test_y: Sequence[int],
                 C: float = 1.0, seed: int = 0) -> dict:
    """Standardise + logistic regression; returns accuracies and the number of trained weights."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(train_x)
    model = LogisticRegression(C=C, max_iter=3000, random_state=seed)
    model.fit(scaler.transform(train_x), np.asarray(train_y))
    return {
        "train_accuracy": float(model.score(scaler.transform(train_x), np.asarray(train_y))),
        "accuracy": float(model.score(scaler.transform(test_x), np.asarray(test_y))),
        "trained_params": int(model.coef_.size + model.intercept_.size),
    }
