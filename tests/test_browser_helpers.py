"""The browser tier's own helpers and lists, checked without a browser (fast tier): the contrast arithmetic behind the
focus-ring test, and a page checker for every page the browser tests open."""
from __future__ import annotations

import pytest

from e2e.conftest import URL_PATHS
from e2e.test_accessibility_browser import behind, contrast
from e2e.test_pages_browser import CHECKERS
from ui import PAGES


def test_contrast_helper():
    assert contrast("rgb(0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(21)
    assert contrast("rgb(225, 233, 244)", "rgb(255, 255, 255)") == pytest.approx(1.22, abs=0.01)  # the old tint
    tinted = behind(["rgba(0, 0, 0, 0)", "rgba(137, 166, 210, 0.25)", "rgb(255, 255, 255)"])
    assert tinted == "rgb(225.5, 232.75, 243.75)"
    assert behind(["rgba(0, 0, 0, 0)"]) == "rgb(255.0, 255.0, 255.0)"


def test_every_page_is_covered():
    assert URL_PATHS[: len(PAGES)] == [spec.url_path for spec in PAGES]
    missing = [p for p in URL_PATHS if p not in CHECKERS]
    assert not missing, f"add a checker for {missing} (check_generic only checks the title)"
