"""Forecast: the pred_len steps after the last row of the active data, in original units.

page.py is the Streamlit script (it only draws); the other modules hold what only this screen uses."""
