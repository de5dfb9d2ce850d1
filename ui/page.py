"""What every page shares: the projector sizes, one way to get a model, one way to show an error,
one way to show a figure, one place for how a result is computed (kept off the projector)."""
from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Literal, TypeVar

import plotly.graph_objects as go
import streamlit as st

from core.figures.style import plot_config
from core.guard.safe_text import md_escape
from ui import presentation
from ui.accessibility import DOCUMENT_LANGS, NARROW_KEY, TALL_KEY
from ui.i18n import current_lang, error_text, t

Result = TypeVar("Result")


def presenting() -> bool:
    """Presentation mode is on: pages draw their figures at projector size."""
    return bool(st.session_state.get("present"))


def how_computed(*texts: str) -> None:
    """How a result is computed (module names, files, commands) for whoever wants to check it, collapsed;
    presentation mode leaves it out: developer names mean nothing to a class on a projector."""
    if presenting():
        return
    with st.expander(t("page.how_computed"), icon=":material/build:"):
        for text in texts:
            st.caption(text)


def show_error(err: BaseException) -> None:
    """A LabError's own message, or a generic line (the details go to the server log): never a traceback."""
    st.error(error_text(err))


def attempt(func: Callable[..., Result], *args, **kwargs) -> Result | None:
    """``func(*args, **kwargs)``, or ``None`` after saying why not, where the page stands: a page's own
    error boundary around its result, so that what does not need the result still draws (``app.py``'s
    boundary would end the whole page)."""
    try:
        return func(*args, **kwargs)
    except Exception as err:  # bad input or a failed model call: a message, never a traceback on the projector
        show_error(err)
        return None


def experiment(func: Callable[..., None]) -> Callable[..., None]:
    """A sub-experiment of a page: an ``st.fragment`` (its own widgets rerun it alone, not the page) with its own
    error boundary (:func:`attempt`): what goes wrong in it is a message where it stands, the rest stays."""
    return presentation.fragment(functools.wraps(func)(lambda *args, **kwargs: attempt(func, *args, **kwargs)))


def load_model(name: str | None, missing: str, *, masked_lm: bool = False):
    """``(encoder, None)``, or ``(None, why not)``: ``missing`` when no model is chosen, else the registry's
    own message (not trained, unknown name, offline, not a masked LM, …). The registry checks availability
    and caches loads and failures, so a page asks nothing else before it uses the model.

    The model comes as a ``core.models.cache.ModelRef``, which the cached computations of ``ui.cache`` take: a
    page keeps it in its globals, which its widget callbacks keep alive after the run, and a plain reference
    to the encoder there would keep every evicted model in memory once per open session."""
    from ui import cache  # torch and transformers: imported on a page's first model, not at the app's start

    if not name:
        return None, missing
    try:
        return cache.model(name, masked_lm=masked_lm), None
    except Exception as err:  # never a traceback on the projector
        return None, error_text(err)


def model_or_message(name: str | None, missing: str, *, masked_lm: bool = False):
    """The encoder, or ``None`` after saying why right here: an info when no model is chosen, an error when
    the chosen one cannot be used."""
    encoder, problem = load_model(name, missing, masked_lm=masked_lm)
    if problem:
        (st.error if name else st.info)(problem)
    return encoder


def plain_answer(key: str, *texts: str):
    """The box a page opens with for a student at home: its question and its answer in plain words (``texts``, markdown
    from the i18n files; a page adds computed lines into the returned container). None on the projector, where
    the lecturer says it."""
    if presenting():
        return None
    box = st.container(border=True, key=key)
    for text in texts:
        box.markdown(text)
    return box


def phone() -> bool:
    """Whether the page is read on a narrow screen: the window is at most 700 px wide, as the browser reports
    (``ui/document.js``: a phone, a tablet in portrait, a narrow desktop window), or its User-Agent says "Mobi", as
    phone browsers' do (known from the first run on, before the report). It decides to stack side-by-side subplots
    and drop chart toolbars (on a phone they sit on the titles, and there is no hover to hide them)."""
    return bool(st.session_state.get(NARROW_KEY)) or "Mobi" in (st.context.headers.get("User-Agent") or "")


def tall() -> bool:
    """Whether the window is at least 960 px high (a 1920×1080 projector, as ``ui/document.js`` reports after the
    first run): a projector's chart sized for 1280×720 may grow into the room it has."""
    return bool(st.session_state.get(TALL_KEY))


def unfolded(label: str, key: str) -> bool:
    """Whether to draw a secondary part of a page (a diagram, a results section, a full heatmap): always on the
    projector; elsewhere behind a switch, off on a narrow screen (:func:`phone`), so that a student on a phone
    reaches the page's result within a few screens. One switch per kind of screen: the width is reported after the
    first run, and a window that turns narrow folds them again."""
    if presenting():
        return True
    narrow = phone()
    return st.toggle(label, value=not narrow, key=f"{key}_narrow" if narrow else key)


# plotly.js's own strings that a chart of the app can show, by their English text (its key in the i18n files): the
# toolbar's one button, the notes of its download, the tips after a zoom or a legend click. Streamlit's plotly.js
# bundles no Chinese locale: the chart's config brings the dictionary (issue #54).
PLOTLY_STRINGS = {
    "Download plot": "page.plotly.download",
    "Preparing image - this may take a few seconds": "page.plotly.preparing",
    "Image download succeeded": "page.plotly.downloaded",
    "Sorry, there was a problem downloading your image!": "page.plotly.download_failed",
    "Double-click to zoom back out": "page.plotly.zoom_back",
    "Double-click on legend to isolate one trace": "page.plotly.legend_isolate",
}


def chart_config(key: str) -> dict:
    """The plotly config of chart ``key``: the toolbar holds only the camera (saves ``<key>.svg`` for a slide;
    zoom, pan, autoscale and Streamlit's fullscreen were 8 Tab stops per chart, 40 on the fill-mask page), and
    plotly's strings are in the page's language. ``ui/document.js`` takes the camera out of the Tab order: the
    toolbar shows on hover, for a mouse; the keyboard has the pages' HTML and CSV download buttons and the
    chart's table."""
    lang = DOCUMENT_LANGS[current_lang()]
    config = plot_config(key.replace("_", "-"))
    config["modeBarButtons"] = [["toImage"]]
    config["locale"] = lang
    config["locales"] = {lang: {"dictionary": {english: t(name) for english, name in PLOTLY_STRINGS.items()}}}
    return config


def chart(fig: go.Figure, key: str, *, width: Literal["stretch", "content"] = "stretch", toolbar: bool = True) -> None:
    """Show a ``core.figures`` figure as it was built (its own plotly_white look, the same as its HTML
    download; Streamlit's theme would restyle it), with a toolbar of one button, the camera saving ``<key>.svg``
    (:func:`chart_config`). ``width="content"`` keeps a figure's own width (square heatmap cells). The chart's
    accessible name is its summary in words (:func:`spoken_summary`); below it, collapsed, its numbers as a table
    (:func:`chart_table`), off the projector."""
    config = chart_config(key)
    if not toolbar or phone():
        config["displayModeBar"] = False
    alt = spoken_summary(fig) if not presenting() and fig.data else None
    st.plotly_chart(fig, key=key, config=config, theme=None, width=width, alt=alt)
    chart_table(fig, key)


def spoken_summary(fig: go.Figure) -> str:
    """One breath of what a chart shows, for a screen reader (``core.figures.table.figure_summary``): its title, each
    series' largest items as "word, value" pairs (a heatmap's largest cell), its axes."""
    summary = _summary_of(fig)
    parts = [t("page.spoken.title", title=summary["title"]) if summary["title"] else t("page.spoken.untitled")]
    for series in summary["series"][:6]:
        name = t("page.spoken.name", name=series["name"]) if series["name"] else ""
        if series["kind"] == "bar":
            top = t("page.spoken.item_sep").join(t("page.spoken.item", label=label, value=value)
                                                 for label, value in series["largest"])
            parts.append(t("page.spoken.bar", name=name, count=series["count"], top=top))
        elif series["kind"] == "heatmap":
            row, column, value = series["largest"]
            parts.append(t("page.spoken.heatmap", name=name, rows=series["rows"], columns=series["columns"], row=row,
                           column=column, value=value))
        elif series["kind"] == "strip":
            parts += [t("page.spoken.strip", name=name, row=row, words=" ".join(words))
                      for row, words in series["rows"]]
        elif series["kind"] == "points":
            parts.append(t("page.spoken.points", name=name, count=series["count"]))
    legend = [series["name"] for series in summary["series"] if series["kind"] == "legend"]
    if legend:
        parts.append(t("page.spoken.legend", names=t("page.spoken.item_sep").join(legend)))
    if summary["x"]:  # an axis without a title is not read out ("vertical axis: —" said nothing)
        parts.append(t("page.spoken.x_axis", x=summary["x"]))
    if summary["y"]:
        parts.append(t("page.spoken.y_axis", y=summary["y"]))
    return " ".join(parts)


_SUMMARIES: dict[int, tuple[weakref.ref, dict]] = {}  # id(figure) -> (the figure, its summary)


def _summary_of(fig: go.Figure) -> dict:
    """``figure_summary(fig)``, once per figure object: a figure every session shares (:func:`shared_figure`) is
    read once per process, not on every run of every session (issue #50)."""
    from core.figures.table import figure_summary

    known = _SUMMARIES.get(id(fig))
    if known is not None and known[0]() is fig:
        return known[1]
    summary, key = figure_summary(fig), id(fig)
    _SUMMARIES[key] = (weakref.ref(fig, lambda _: _SUMMARIES.pop(key, None)), summary)
    return summary


TABLE_KEY_SUFFIX = "__numbers"  # the key of a chart's table expander: the chart's key and this


def chart_table(fig: go.Figure, key: str) -> None:
    """The figure's numbers (``core.figures.table``) as an HTML table a screen reader reads, in a collapsed
    expander (key ``<chart key>__numbers``). Presentation mode leaves it out: the projector is looked at, and each
    scene's result must fit below the scene bar (a screen reader user follows on their own device). Cells are
    Markdown-escaped (they hold the user's sentences).

    The table is built only while its expander is open (``on_change="rerun"``: opening it reruns the page, or the
    chart's fragment, and ``.open`` says so): built on every run it was a quarter of a page run's Python for a
    table nobody had opened (issue #50)."""
    if presenting() or not fig.data:
        return  # a diagram without data (the ELMo scalar-mix sketch) has no numbers
    expander = st.expander(t("page.chart_data"), icon=":material/table:", key=key + TABLE_KEY_SUFFIX,
                           on_change="rerun")
    if not expander.open:
        return
    from core.figures.table import axis_titles, figure_table  # pandas: with the first table, not at the app's start

    table, total = figure_table(fig)
    with expander:
        if total > len(table):
            st.caption(t("page.chart_data_more", n=len(table), total=total))
        # the x and y columns named by the chart's axes where it has one pair (概率, 层), else generic
        headers = {c: t(f"page.chart_col.{c}") for c in table.columns} | axis_titles(fig)
        st.table(table.map(md_escape).rename(columns=headers), hide_index=True)


def shared_figure(builder: Callable[..., go.Figure], *args, **kwargs) -> go.Figure:
    """``builder(*args, **kwargs)`` built once per distinct arguments and shared by every session. For figures
    of precomputed results and constant diagrams: a class's sessions would otherwise each rebuild them, and
    plotly's validation is most of a page run's time under the GIL (``core/runtime/concurrency.py``). Shared, not
    copied: the caller must not change the figure."""
    return _shared_figure(builder, f"{builder.__module__}.{builder.__qualname__}", args, kwargs)


@st.cache_resource(max_entries=256, show_spinner=False)
def _shared_figure(_builder: Callable[..., go.Figure], builder_name: str, args: tuple,  # builder_name: its key
                   kwargs: dict) -> go.Figure:
    return _builder(*args, **kwargs)
