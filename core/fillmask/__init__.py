"""BERT's masked-language-model view, one idea a module:

- ``masks``: the sentence BERT sees (typed [MASK]s, a word or characters to mask), its checks, runs of masks.
- ``tokens``: the vocabulary's tokens as candidates (WordPiece text, punctuation, specials never offered).
- ``prediction``: the top-k candidates of every mask from one forward pass (``fill_mask``).
- ``iterative``: filling the most confident mask, one at a time (``iterative_fill``).
- ``words``: whole words for a run of adjacent masks by beam search (``word_candidates``, ``proposals``).
- ``scoring``: words the user proposes, scored at the masks (``candidate_scores``).
- ``corruption``: the pretraining corruption (15% chosen: 80% [MASK], 10% random, 10% kept).
- ``nsp``: next-sentence prediction, BERT's second pretraining task.

Nothing is imported here: each caller names the module it needs.
"""
