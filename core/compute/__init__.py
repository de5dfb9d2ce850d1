"""The maths on encodings: vector geometry, scalar mixes, statistics, word occurrences, per-token vectors."""
