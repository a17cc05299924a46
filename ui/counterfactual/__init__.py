"""Counterfactual editor: edit one encoder window and see what changes, the same key sample for both runs.

page.py is the Streamlit script (it only draws); the other modules hold what only this screen uses."""
