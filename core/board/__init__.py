"""The class board: its rules (who may send what) and its store (SQLite or PostgreSQL)."""
