"""What the two vector pages (static vs contextual, ELMo's layer weights) compute, one idea a module (pure:
arrays in, arrays out):

- ``parsing``: the text box and the target word → clean sentences, sense labels, word (``parse_input``).
- ``view``: one call per (models, sentences, word) → ``VectorsView``: the static and contextual vectors of every
  occurrence, their projection, cosine matrices, nearest neighbours and sense accuracy per layer
  (``occurrence_layers``).
- ``projection``: ONE joint PCA over all layers, so a layer scrubber moves points inside a fixed frame.
- ``mix``: the ELMo scalar mix γ · Σ_j s_j h_j of the cached layers in that frame, its sense accuracy and whether
  the weights make a difference (``mix_view``, ``weights_verdict``). Cheap: a slider only calls this.
- ``export``: the vectors as downloadable data (``export_rows``, ``to_csv``, ``to_json``).

Nothing is imported here: each caller names the module it needs.
"""
