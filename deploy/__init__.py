"""Deployment helpers: running the app for a lecture hall (lecture_hall.py)."""
