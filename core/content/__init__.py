"""The lab's teaching content and records: the ``?scene=`` sentence sets, exercises, budgets, stored results."""
