"""Data & model: choose the data, see how it parsed, train a model in the background, or load one.

page.py is the Streamlit script (it only draws); the other modules hold what only this screen uses."""
