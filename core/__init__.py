"""Pure-Python core of the ELMo→BERT Lab (no Streamlit imports)."""
