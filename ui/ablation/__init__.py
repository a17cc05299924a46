"""Ablation studies: how much each head, site or random set of heads matters to the forecast error.

page.py is the Streamlit script (it only draws); the other modules hold what only this screen uses."""
