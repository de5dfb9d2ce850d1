"""Training scripts for the embedded teaching models (run as ``python -m core.train.<model>``)."""
