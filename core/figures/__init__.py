"""Figure builders: plain arrays in, a ``plotly.graph_objects.Figure`` out (no model loading here)."""
