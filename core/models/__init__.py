"""Models, from a name to a loaded encoder, one concern a module:

- ``catalogue``: which models there are (the embedded ones, the default names), and the cache key of a name;
  plain files, no torch.
- ``encoders``: the one interface every model answers (``Encoder``, ``Encoding``) and the BERT, ELMo and
  word2vec encoders.
- ``loaders``: a model built from its files, with every check it must pass.
- ``hub``: calls that may reach the Hugging Face hub, under deadlines; ``hub_cache``: what is already downloaded.
- ``cache``: each model loaded once per process (``load_encoder``, ``load_ref``, ``ModelRef``, ``clear``).

Nothing is imported here, so that ``core.models.catalogue`` stays light (``python -m core models``).
"""
