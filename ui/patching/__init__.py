"""Activation patching: how much of a clean window's forecast each head's context carries into a corrupted run.

page.py is the Streamlit script (it only draws); the other modules hold what only this screen uses."""
