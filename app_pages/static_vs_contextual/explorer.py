"""The static-vs-contextual page's explorer: word2vec's one point beside one contextual point per
occurrence, the cosine matrix, nearest neighbours and sense accuracy per layer. A fragment: the layer
scrubber and the centring toggle only slice the cached arrays of a ``VectorsView``.
"""
from __future__ import annotations

import html

import numpy as np
import streamlit as st

from core.figures import vectors as figs
from core.figures.style import export_html
from core.guard.safe_text import md_escape
from core.models.catalogue import DEFAULT_STATIC
from core.vectors.export import export_rows, to_csv, to_json
from core.vectors.parsing import ParsedInput
from core.vectors.view import HOVER_MAX_SENTENCES, VectorsView, highlight
from ui import downloads, presentation
from ui.i18n import layer_name, t
from ui.page import chart, phone, presenting
from ui.state import Field, in_range, relabel, seed, sync_to_url


def _static_parts(view: VectorsView, word: str, static_dim: int | None):
    """Words, coords, explained, hover, note of the left subplot."""
    if static_dim is None:
        return None, None, None, "", t("static.fig.static_unavailable")
    if view.oov:
        return None, None, None, "", t("static.fig.oov", word=html.escape(word))
    if view.static_map is None:
        return None, None, None, "", t("static.fig.static_none")
    lines = [f"{i + 1}. {h}" for i, h in enumerate(view.static_hover[: HOVER_MAX_SENTENCES])]
    more = len(view.static_hover) - HOVER_MAX_SENTENCES
    if more > 0:
        lines.append(t("static.fig.more", n=more))
    hover = f"<b>{t('static.fig.static_point')}</b><br>" + "<br>".join(lines)
    m = view.static_map
    return m.words, m.coords, m.explained, hover, t("static.fig.static_caption", n=len(view.static_hover))


def _reading_guide(view: VectorsView, word_md: str, names: list[str], j: int, centre: bool) -> None:
    """How to read the cosine: against the same word's layer 0 (before any context), not against 0 or another
    word's number."""
    base, now = view.mean_cosine(centre, 0), view.mean_cosine(centre, j)
    drop = round(base - now, 2)
    what = t("static.reading.pair" if view.num_occurrences == 2 else "static.reading.mean", word=word_md)
    st.markdown(t("static.reading", what=what, base=f"{base:.2f}", now=f"{now:.2f}", layer=names[j], zero=names[0],
                  verdict=t("static.reading.lower", drop=f"{drop:.2f}", word=word_md) if drop > 0 and j > 0
                  else t("static.reading.same" if j > 0 else "static.reading.base")))


# C901 (17 > 15, noqa below): one fragment, so that the layer slider reruns only this figure; its branches are
# the projector, phone and pair layouts of the same controls
@presentation.fragment
def explorer(view: VectorsView, parsed: ParsedInput, ctx_name: str | None, contextual: bool,  # noqa: C901
             static_dim: int | None) -> None:
    """``contextual``: the contextual model is loaded; ``static_dim``: word2vec's size (``None``: not loaded)."""
    large, word_md, narrow = presenting(), md_escape(parsed.word), phone()
    names = [layer_name(n) for n in view.layer_names]
    has_points = view.num_occurrences > 0 and view.coords is not None  # coords and projection: set together
    pair = has_points and view.num_occurrences == 2
    with st.container(key="static_result"):
        # on the projector the controls (and a pair's cosine) share one row, so that they and the whole
        # figure fit below the scene bar at 1280×720; the pair's explanation follows the figure
        if not large:
            slot_layer, slot_centre, slot_pair = st.container(), st.container(), None
        elif pair:
            slot_layer, slot_centre, slot_pair = st.columns([4, 5, 3], vertical_alignment="center")
        else:
            (slot_layer, slot_centre), slot_pair = st.columns([3, 2], vertical_alignment="center"), None
        j = 0
        if names:
            seed(Field("static_layer", "layer", len(names) - 1, in_range(0, len(names) - 1)))
            relabel("static_layer", names)  # ELMo ↔ BERT: same key, other layer names
            j = slot_layer.select_slider(t("static.layer"), options=list(range(len(names))), key="static_layer",
                                         format_func=lambda i: f"{i} · {names[i]}", help=t("static.layer_help"),
                                         disabled=not has_points, persist_state="session")
        centre = slot_centre.toggle(t("static.centre"), key="static_centre", persist_state="session",
                                    help=t("static.centre_help" if view.can_centre else "static.centre_pair"),
                                    disabled=has_points and not view.can_centre, wrap=True)  # in a column: not cut
        sync_to_url(layer=j if names else None, centre=True if centre else None)
        centre = centre and view.can_centre  # the toggle keeps its value for the next sentences
        if pair:
            # two points: PCA always puts them at mirrored ends, so the number must carry the message
            pair_cos = float(view.cosine[centre][j][0][1])
            pair_note = t("static.pair_cos_note", dim=view.stacked().shape[-1])
            if slot_pair is None:  # not on the projector: the metric beside its explanation
                slot_pair, c_note = st.columns([3, 5], vertical_alignment="center")  # the label is cut below ~280 px
                c_note.caption(pair_note)
            slot_pair.metric(t("static.pair_cos", word=word_md), f"{pair_cos:.2f}")

        if has_points and view.num_occurrences >= 2 and not large:
            _reading_guide(view, word_md, names, j, centre and not pair)

        words, s_coords, s_explained, s_hover, s_note = _static_parts(view, parsed.word, static_dim)
        static_title = (t("static.fig.static_title", name=DEFAULT_STATIC, dim=static_dim)
                        if static_dim is not None else t("static.fig.static_title_short", name=DEFAULT_STATIC))
        shown_layer = names[j] if names else "—"
        contextual_note = None
        if not contextual:
            contextual_note = t("static.fig.ctx_unavailable")
        elif not has_points:
            contextual_note = t("static.fig.ctx_none")
        coords = view.coords[j] if view.coords is not None else None
        background = view.background_coords[j] if view.background_coords is not None else None
        axis = None
        if view.coords is not None:
            allc = view.coords.reshape(-1, 2) if view.background_coords is None else np.concatenate(
                [view.coords.reshape(-1, 2), view.background_coords.reshape(-1, 2)])
            # the background's labels sit above its markers: room for the top row
            axis = (figs.padded_range(allc[:, 0]), figs.padded_range(allc[:, 1], 0.12 if background is None else 0.2))
        ctx_title = (t("static.fig.ctx_title", name=ctx_name or "—", layer=shown_layer, dim=view.stacked().shape[-1])
                     if has_points else t("static.fig.ctx_title_short", name=ctx_name or "—"))
        fig = figs.static_vs_contextual_figure(
            static_words=words, static_coords=s_coords, static_explained=s_explained,
            static_label=t("static.fig.static_point"), static_hover=s_hover, static_note=s_note,
            coords=coords, ids=view.ids, labels=view.occurrence_labels, hover=view.hover,
            explained=view.projection.explained_variance_ratio if view.projection is not None else None,
            axis_range=axis,
            static_title=static_title, contextual_title=ctx_title,
            contextual_note=contextual_note, unlabelled_name=t("static.fig.unlabelled"),
            neighbour_name=t("static.fig.neighbours"), background_tokens=view.background_tokens,
            background_coords=background, background_name=t("static.fig.background"),
            large=large, height=(325 if pair else 370) if large else (900 if narrow else 560), stacked=narrow,
        )
        chart(fig, "static_scatter")
    if pair and large:
        st.caption(pair_note)
    if view.projection is not None:
        ev = view.projection.explained_variance_ratio
        st.caption(t("static.caption_spaces_background" if background is not None else "static.caption_spaces",
                     pc1=f"{100 * ev[0]:.0f}", pc2=f"{100 * ev[1]:.0f}", n=view.num_occurrences,
                     word=word_md, m=len(view.background_tokens)))
    else:
        st.caption(t("static.caption_spaces_short"))

    if view.contextual is not None and view.num_occurrences >= 2:
        col_heat, col_table = st.columns([1, 1], gap="large")
        with col_heat:
            matrix = view.cosine[centre][j]
            title = t("static.cosine_title_centred" if centre else "static.cosine_title", layer=shown_layer)
            chart(figs.cosine_heatmap(matrix, view.ids, title, large=large,
                                      height=560 if view.num_occurrences <= 14 else 680), "static_heatmap")
            low, _ = figs.cosine_range(matrix)
            st.caption(t("static.cosine_scale", low=f"{low:.2f}"))
        with col_table:
            st.markdown(f"**{t('static.nn_title', layer=shown_layer)}**")
            occurrences = view.contextual.occurrences
            rows = {"#": list(view.ids)}
            if parsed.has_labels:  # an empty column would push the neighbours out of sight at 1280 px
                rows[t("static.col.label")] = [occ.label or "" for occ in occurrences]
            rows[t("static.col.sentence")] = [highlight(o.sentence, o.start, o.end, escape=False)
                                              for o in occurrences]
            rows[t("static.col.nn")] = ["  ".join(f"#{view.ids[k]} ({sim:.2f})" for k, sim in nearest)
                                        for nearest in view.neighbours[centre][j][:len(occurrences)]]
            st.dataframe(rows, hide_index=True, key="static_nn",
                         height="content" if view.num_occurrences <= 14 else 520)
            st.caption(t("static.nn_caption"))
        if any(a is not None for a in view.accuracy.get(centre, [])):
            chart(figs.accuracy_chart(
                names, view.accuracy[centre], view.static_accuracy.get(centre), n=view.scored,
                contextual_name=ctx_name or "", static_name=t("static.acc_static", name=DEFAULT_STATIC),
                title=t("static.acc_title"), large=large, current=j), "static_acc")
            st.caption(t("static.acc_caption"))
            guess = view.static_accuracy.get(centre)
            if guess is not None:  # why word2vec scores 33% on two senses: each sentence's tie among the others
                st.caption(t("static.acc_guess", share=f"{guess:.0%}"))
        elif parsed.has_labels:
            st.caption(t("static.acc_none"))
        else:
            st.caption(t("static.acc_hint"))

    col1, col2, col3 = st.columns(3)
    col1.download_button(t("static.dl_html"), data=lambda: export_html(fig), file_name="static-vs-contextual.html",
                         mime="text/html", on_click="ignore", key="static_dl_html", icon=":material/download:")
    col2.download_button(t("static.dl_csv"), data=lambda: to_csv(export_rows(view)),
                         file_name="vectors.csv", mime="text/csv", on_click="ignore", key="static_dl_csv",
                         icon=":material/download:", disabled=not (view.num_occurrences or view.static_hover))
    col3.download_button(t("static.dl_json"), data=lambda: to_json(view), file_name="vectors.json",
                         mime="application/json", on_click="ignore", key="static_dl_json",
                         icon=":material/download:", disabled=not (view.num_occurrences or view.static_hover))
    downloads.projector_button(view)
