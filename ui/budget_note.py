"""A caption with the training budgets of the models a section compares (``core.content.budgets``, read from
``assets/models/training.json``): wherever ELMo and BERT stand side by side, the class sees that BERT
had about ten times the tokens, on a GPU, before reading any difference as the architectures' doing.
"""
from __future__ import annotations

import streamlit as st

from core.content.budgets import TRAINING_FILE, Budget, format_minutes, format_tokens, load_budgets, token_ratio
from ui import cache
from ui.i18n import current_lang, t


def budget_line(budget: Budget) -> str:
    params = dict(model=budget.model, tokens=format_tokens(budget.tokens, current_lang()),
                  cpu=format_minutes(budget.cpu_minutes),
                  cores=budget.cpu_cores, gpu=budget.gpu, gpu_minutes=format_minutes(budget.gpu_minutes))
    line = t("budget.line.gpu" if budget.gpu else "budget.line.cpu", **params)
    if budget.whole_word:
        line += t("budget.whole_word", share=f"{budget.whole_word:.0%}")
    return line


def budget_note(*models: str | None) -> None:
    """One caption: how many times the tokens one model saw the other, then each model's budget (a
    ``None`` model, e.g. no BERT chosen, is left out)."""
    budgets = cache.file_result(load_budgets, TRAINING_FILE)
    models = tuple(m for m in models if m)
    lines = [budget_line(budgets[m]) if m in budgets else t("budget.not_recorded", model=m) for m in models]
    recorded = sorted((m for m in models if m in budgets), key=lambda m: budgets[m].tokens)
    if len(recorded) >= 2:
        ratio = token_ratio(budgets, recorded[-1], recorded[0])
        lines.insert(0, t("budget.ratio", larger=recorded[-1], smaller=recorded[0], ratio=f"{ratio:.0f}"))
    st.caption("  \n".join(lines))
