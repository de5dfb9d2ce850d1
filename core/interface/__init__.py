"""The public surface: the library API (``api``), its reference page, export files and the CLI's input/output."""
