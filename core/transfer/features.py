"""Feature-based transfer: a FROZEN encoder only turns each review into a vector, and a logistic regression
(scikit-learn) is trained on those vectors, its C chosen on the validation split (``tuning``).
mini-elmo-zh: every layer mean-pooled over the review and standardised, then mixed with uniform s
(the features of the ELMo page's uniform s, ``core.experiments.learned_mix``); mini-bert-zh: every
layer's [CLS] vector or its token mean.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .tuning import choose, split_point

POOLINGS = ("cls", "mean")


def _content_mask(special: Sequence[bool]) -> np.ndarray:
    mask = ~np.asarray(special, dtype=bool)
    if not mask.any():  # an all-special sequence cannot happen for real text; keep it defined anyway
        mask[:] = True
    return mask


def _fit(encoder, texts: Sequence[str]) -> list[str]:
    """Cut texts to the model's length limit (character models: one token per character + 2 specials), at most
    512 tokens: the recorded experiment's cut (ELMo's limit was 512 before it read every sentence whole)."""
    limit = max(1, min(int(getattr(encoder, "max_tokens", 512)), 512) - 2)
    return [text[:limit] for text in texts]


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


def standardised_mix(train_layers: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """Layer features ``(L+1, n, dim)`` → ``(n, dim)``: each layer standardised per dimension with the
    training reviews' mean and deviation, then averaged (uniform s = 1/(L+1)). Without the standardising
    the mix would follow the layer that varies most (mini-elmo-zh's token layer, several times its biLSTM layers)."""
    mean = train_layers.mean(axis=1, keepdims=True)
    std = np.maximum(train_layers.std(axis=1, keepdims=True), 1e-6)
    return [((x - mean) / std).mean(axis=0).astype(np.float32) for x in (train_layers, *others)]


def _logistic(x: np.ndarray, y: np.ndarray, C: float, seed: int):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=3000, random_state=seed)).fit(x, y)


def fit_probe(train_x: np.ndarray, train_y: Sequence[int] | np.ndarray, test_x: np.ndarray,
              test_y: Sequence[int] | np.ndarray, *,
              C_grid: Sequence[float], val_share: float, seed: int = 0) -> dict:
    """Standardise + logistic regression: C chosen on the last ``val_share`` of the training reviews
    (fitted on the rest), then refitted on all of them and scored once on the test reviews. Returns the
    accuracies, each test review's outcome (``correct``: "1"/"0" per review, for paired comparisons),
    the choice of C and the number of trained weights."""
    train_y, test_y = np.asarray(train_y), np.asarray(test_y)  # arrays from here on
    cut = split_point(len(train_y), val_share)
    choice = choose("C", C_grid, lambda C: _logistic(train_x[:cut], train_y[:cut], C, seed).score(train_x[cut:],
                                                                                                  train_y[cut:]),
                    n_fit=cut, n_val=len(train_y) - cut)
    model = _logistic(train_x, train_y, choice["chosen"], seed)
    right = model.predict(test_x) == test_y
    head = model[-1]
    return {
        "train_accuracy": float(model.score(train_x, train_y)),
        "accuracy": float(right.mean()),
        "correct": "".join("1" if r else "0" for r in right),
        "choice": choice,
        "trained_params": int(head.coef_.size + head.intercept_.size),
    }
