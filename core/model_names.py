"""Names of the embedded models: the defaults every page, CLI command and experiment starts from.

A module of its own so that the CLI can name them without importing the registry (and transformers).
"""
DEFAULT_BERT, DEFAULT_ELMO, DEFAULT_STATIC = "mini-bert-zh", "mini-elmo-zh", "word2vec-zh"
