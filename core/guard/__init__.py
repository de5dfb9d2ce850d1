"""Input safety and errors: LabError and its message catalogue, argument checks, safe text and JSON, word filter."""
