"""Circuits: composition of heads from the weights, attribution patching against exact patching, path patching.

page.py is the Streamlit script (it only draws); the other modules hold what only this screen uses."""
