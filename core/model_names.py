"""Names of the embedded models: the defaults every page, CLI command and experiment starts from, and which other
names and model types the lab takes.

A module of its own so that the CLI and the sidebar can name them without importing the registry (and
transformers, seconds of start-up).
"""
import re

DEFAULT_BERT, DEFAULT_ELMO, DEFAULT_STATIC = "mini-bert-zh", "mini-elmo-zh", "word2vec-zh"
MASKED_LM_TYPES = {"bert", "roberta", "xlm-roberta", "electra", "albert", "distilbert", "camembert", "ernie"}
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.\-]*(/[A-Za-z0-9][\w.\-]*)?")
FAILURE_TTL_S = 60.0  # a failed hub / directory load is answered from memory this long, not retried per rerun
