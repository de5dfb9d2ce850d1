"""Observing the model cache from tests: how often each model is really loaded.

``core.models.cache`` keeps no count of its own; a test (or the e2e server wrapper, in the server process)
wraps the loader it calls, ``core.models.loaders.load``, instead. Light imports only: the e2e server wrapper
imports this module before Streamlit starts."""
from __future__ import annotations

from collections import Counter


def count_loads(loaders, patch=setattr) -> Counter:
    """From now on, count every load that ``loaders.load`` completes, per model key (a failed load is not
    counted; ``load_private``'s own copies are). ``patch(loaders, "load", wrapper)`` installs the wrapper: pass
    ``monkeypatch.setattr`` to have it removed after the test."""
    loads: Counter = Counter()
    load = loaders.load

    def counted(key: str):
        encoder = load(key)
        loads[key] += 1
        return encoder

    patch(loaders, "load", counted)
    return loads
