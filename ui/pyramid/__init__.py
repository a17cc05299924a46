"""Distilling pyramid: how each encoder layer halves the sequence, and what survives max-pooling.

page.py is the Streamlit script (it only draws); the other modules hold what only this screen uses."""
