"""Anatomy of a forecast: rollout and flow, the forecast lens, each decoder head's direct share.

page.py is the Streamlit script (it only draws); the other modules hold what only this screen uses."""
