"""Ready-made scenes for the vector pages: a target word and sentences, optionally ``label|sentence``.

The labels name the word's sense in that sentence; they colour the points and feed the
leave-one-out nearest-neighbour sense accuracy. The first scene is the lecture's own pair
(我吃了一个苹果 / 苹果昨天发布了新手机). Titles are i18n keys ``scenes.<id>``.

Also: reading an uploaded text file (UTF-8, one sentence per line).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..guard.errors import LabError

MAX_UPLOAD_BYTES = 1_000_000  # = .streamlit/config.toml server.maxUploadSize (1 MB): the browser refuses larger
# files (ui.sentence_inputs translates its note); this check covers a Windows browser's 1 MiB and direct calls


@dataclass(frozen=True)
class Scene:
    id: str
    word: str
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def labelled(self) -> bool:
        return any("|" in line for line in self.lines)


SCENES: dict[str, Scene] = {}


def _add(scene_id: str, word: str, lines: str) -> None:
    SCENES[scene_id] = Scene(scene_id, word, tuple(l.strip() for l in lines.strip().splitlines() if l.strip()))


# The lecture's pair, unlabelled: with two sentences of two senses a leave-one-out score is always 0.
_add("lecture_apple", "苹果", """
我吃了一个苹果
苹果昨天发布了新手机
""")

_add("apple", "苹果", """
水果|我吃了一个苹果
水果|妈妈买了一袋红富士苹果
水果|这个苹果又脆又甜
水果|他把苹果削了皮切成小块
水果|秋天果园里的苹果都熟了
水果|每天吃一个苹果对身体有好处
水果|她用苹果和香蕉榨了一杯果汁
水果|超市里的苹果今天打折
公司|苹果昨天发布了新手机
公司|苹果公司的股价今天上涨了
公司|他刚买了一台苹果笔记本电脑
公司|苹果的新系统修复了很多问题
公司|苹果在发布会上展示了新款平板
公司|很多开发者为苹果的应用商店写软件
公司|苹果和三星在手机市场竞争激烈
公司|库克是苹果的首席执行官
""")

_add("baofu", "包袱", """
布包|他背着一个包袱去北京
布包|奶奶用蓝布包袱包好了几件衣服
布包|她把包袱放在火车的行李架上
布包|逃难的人们背着包袱赶路
负担|放下思想包袱，轻装上阵
负担|他心里的包袱终于放下了
负担|不要给孩子太大的心理包袱
负担|这笔债务成了全家的包袱
笑料|相声演员抖了一个包袱，全场大笑
笑料|这段相声的包袱一个接一个
笑料|他说相声最会抖包袱
笑料|这个包袱没响，观众都没笑
""")

_add("xing", "行", """
银行|我下午去银行存钱
银行|这家银行今天不营业
银行|他在一家外资银行工作
银行|银行的贷款利率又下调了
行走|他在山路上慢慢行走
行走|这条路禁止车辆通行
行走|他们在沙漠里行走了三天
行走|路口的行人很多，开车要小心
行不行|这样做行吗？
行不行|你一个人去行吗
行不行|行，就这么办吧
行不行|我觉得这个方案不行
""")

_add("da", "打", """
打电话|我晚上给妈妈打电话
打电话|他正在打电话，请等一下
打电话|有事就打我的手机
打电话|她打了三次电话都没人接
打篮球|我们周末去体育馆打篮球
打篮球|他从小就喜欢打篮球
打篮球|放学后同学们在操场上打球
打篮球|他打了一下午篮球，累坏了
打酱油|妈妈让我去小卖部打酱油
打酱油|小时候我常拿着瓶子去打酱油
打酱油|他提着空瓶去商店打酱油
打酱油|奶奶让孙子去街口打点酱油回来
""")

# A word that a small word2vec most likely never saw: the lecture's third limitation (OOV).
_add("oov", "元宇宙", """
很多公司都在谈论元宇宙
他想在元宇宙里开一家虚拟商店
元宇宙会改变人们社交的方式吗
""")

DEFAULT_SCENE = "lecture_apple"


def get_scene(scene_id: str | None) -> Scene:
    """The scene ``scene_id``, or the default scene for an unknown id."""
    return SCENES.get(scene_id or "", SCENES[DEFAULT_SCENE])


def decode_upload(data: bytes, max_bytes: int = MAX_UPLOAD_BYTES) -> str:
    """The text of an uploaded ``.txt`` file (one sentence per line).

    Raises ``LabError("not_text")`` for binary or non-UTF-8 content and ``LabError("file_too_large")``
    above ``max_bytes``. A UTF-8 byte-order mark is dropped and line endings become ``\\n``.
    """
    if len(data) > max_bytes:
        raise LabError("file_too_large", size=f"{len(data) / 1e6:.1f}", limit=f"{max_bytes / 1e6:g}")
    if b"\x00" in data:
        raise LabError("not_text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LabError("not_text") from exc
    # Other control characters than tabs and line breaks mean this is not a plain text file.
    controls = sum(1 for c in text if ord(c) < 32 and c not in "\t\r\n")
    if controls > max(2, len(text) // 100):
        raise LabError("not_text")
    return text.replace("\r\n", "\n").replace("\r", "\n")
