"""Ready-made classroom scenes: the lecture walked through the app in order, one page state per scene.

Each scene names a page (its ``url_path`` in ``ui.PAGES``) and the query parameters that page reads
(``ui.state.url_param`` names: ``scene``/``ctx``/``layer`` on static-vs-contextual, ``scene``/``mode``/
``w``/``gamma`` on elmo-weights, ``sentence`` on fill-mask and attention-heatmap, …). A scene is
opened with the extra parameter ``slide=<scene id>``; ``ui.presentation`` then resets that page's
widgets so they start from the scene's parameters even if the page was visited before.

Pure data, no Streamlit: what a scene opens (page, parameters) and what it is about (its result's key), in one
place. Titles and notes are i18n keys ``present.scene.<id>`` / ``present.note.<id>``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

SLIDE_PARAM = "slide"


def _encode(value) -> str:
    """The query-string form (the same rules as ``ui.state.encode``)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


@dataclass(frozen=True)
class Scene:
    id: str
    url_path: str
    params: tuple[tuple[str, str], ...] = ()
    # the widget or container key of what the scene is about (a chart's controls, a chart): presentation mode
    # scrolls it to just below the scene bar on arrival, where it must fit whole, axis labels and legend included,
    # at 1280×720 (tests/e2e/test_presenter_bar_browser.py); None: the scene opens at the page top (title pages)
    result: str | None = None

    @property
    def title_key(self) -> str:
        return f"present.scene.{self.id}"

    @property
    def note_key(self) -> str:
        return f"present.note.{self.id}"

    @property
    def query(self) -> dict[str, str]:
        """The scene's page parameters plus ``slide=<id>`` (what a link to the scene carries)."""
        return {**dict(self.params), SLIDE_PARAM: self.id}


def _scene(scene_id: str, url_path: str, result: str | None = None, **params) -> Scene:
    return Scene(scene_id, url_path, tuple((k, _encode(v)) for k, v in params.items()), result)


SCENES: tuple[Scene, ...] = (
    _scene("home", "overview", "home_threads"),
    # static vectors vs contextual vectors: the lecture's 苹果 pair, then many sentences of two senses
    _scene("pair", "static-vs-contextual", "static_result", scene="lecture_apple", ctx="elmo"),
    _scene("senses", "static-vs-contextual", "static_result", scene="apple", ctx="elmo", layer=0),
    _scene("oov", "static-vs-contextual", "static_result", scene="oov", ctx="elmo"),
    # ... and with the class's own sentences: the lecturer's current class board
    _scene("board", "class-board", "board_result"),
    # ELMo's pre-training task: the forward and backward language models
    _scene("bilm", "pretraining-objectives", "obj_bilm_result", sentence="我吃了一个苹果", pos=5),
    # ELMo's scalar mix: the lecture's worked example, then the two task presets
    _scene("worked", "elmo-weights", "elmo_exercise", scene="lecture_apple", mode="direct", w=[0.2, 0.3, 0.5],
           gamma=2.0),
    _scene("syntax", "elmo-weights", "elmo_s_result", scene="apple", mode="direct", w=[0.5, 0.4, 0.1], gamma=2.0),
    _scene("semantics", "elmo-weights", "elmo_s_result", scene="apple", mode="direct", w=[0.1, 0.3, 0.6], gamma=2.0),
    # ... and the s and γ two real tasks learned (results of python -m core.experiments)
    _scene("learned", "elmo-weights", "elmo_learned_bars"),
    # the claim behind those presets ("lower layers: syntax, upper layers: semantics"), measured
    _scene("evidence", "layer-evidence", "evidence_result", section="pos"),
    # BERT: deep bidirectionality vs ELMo's concatenation, masked language model, iterative filling,
    # masked vs left-to-right prediction, self-attention
    _scene("deep", "pretraining-objectives", "obj_deep_result", a="苹果昨天发布了新手机", b="苹果昨天掉在了地上",
           token=0),
    _scene("fill", "fill-mask", "fill_topk", sentence="我吃了一个[MASK][MASK]。"),
    _scene("iterative", "fill-mask", "fill_replay_result", sentence="他去[MASK][MASK]馆借了三本书。"),
    _scene("objective", "pretraining-objectives", "obj_gpt_result", gpt_sentence="我吃了一个苹果", mask=5),
    _scene("attention", "attention-heatmap", "att_head_view", sentence="苹果昨天发布了新手机", token="苹"),
    # the two ways of using a pre-trained model, today's parameter-efficient fine-tuning, the lecture's exercises
    _scene("transfer", "feature-vs-finetune", "transfer_compare"),
    _scene("lora", "feature-vs-finetune", "transfer_lora"),
    _scene("exercises", "exercises"),
)
BY_ID: dict[str, Scene] = {scene.id: scene for scene in SCENES}


def scene_index(slide: str | None, url_path: str | None) -> int | None:
    """Index of the current scene: the ``slide`` parameter if it names a scene on this page, else the
    first scene of the page, else None (a page without scenes)."""
    if slide in BY_ID and (url_path is None or BY_ID[slide].url_path == url_path):
        return SCENES.index(BY_ID[slide])
    for i, scene in enumerate(SCENES):
        if scene.url_path == url_path:
            return i
    return None


def neighbours(index: int | None) -> tuple[Scene | None, Scene | None]:
    """(previous, next) scene; off the scene list, "next" is the first scene."""
    if index is None:
        return None, SCENES[0]
    previous = SCENES[index - 1] if index > 0 else None
    following = SCENES[index + 1] if index + 1 < len(SCENES) else None
    return previous, following
