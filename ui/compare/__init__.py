"""Compare: the Informer's forecasts next to its full-attention counterfactual, a twin and simple baselines.

page.py is the Streamlit script (it only draws); the other modules hold what only this screen uses."""
