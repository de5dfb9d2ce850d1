"""The home page's model table: its rows from core.views.status.model_rows on the real registry, the chosen model read
the one way every page reads it (ui.sidebar.bert_model_name), also when the page runs alone."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.models import catalogue
from core.views.status import SUGGESTED_HUB_MODEL, model_rows
from ui.i18n import translate

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "app_pages" / "home" / "page.py")
HUB_ID = "some-org/some-bert"  # a well-formed hub id that is in no cache


def test_rows_are_the_registry_then_the_hub_models():
    models = list(catalogue.list_models())
    rows = model_rows(models, HUB_ID)
    assert [r.name for r in rows] == [m.name for m in models] + [SUGGESTED_HUB_MODEL, HUB_ID]
    assert all(r.ready == m.available and r.kind == m.kind and r.info is m for r, m in zip(rows, models))
    assert {r.name for r in rows if r.kind == "bert"} >= {catalogue.DEFAULT_BERT}
    assert rows[-1].kind == "hub" and rows[-1].ready is False and rows[-1].num_layers is None


def test_a_chosen_model_that_has_a_row_or_is_no_hub_id_adds_none():
    models = list(catalogue.list_models())
    plain = [r.name for r in model_rows(models, None)]
    assert plain == [m.name for m in models] + [SUGGESTED_HUB_MODEL]
    for chosen in (catalogue.DEFAULT_BERT, SUGGESTED_HUB_MODEL, str(ROOT), "./my-bert", "a/b/c"):
        assert [r.name for r in model_rows(models, chosen)] == plain, chosen


def test_the_page_alone_lists_the_hub_model_of_its_url():
    """Before the sidebar has run the chosen model is the URL's (the page read the sidebar's key directly and
    missed it)."""
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["model"] = HUB_ID
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.table[0].value
    names = list(table[translate("zh", "home.models.col.name")])
    assert names[-2:] == [SUGGESTED_HUB_MODEL, HUB_ID]
    states = list(table[translate("zh", "home.models.col.status")])
    assert states[-1] == translate("zh", "home.models.hub_missing")
    assert states[0] == translate("zh", "home.models.ready")
