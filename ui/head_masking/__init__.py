"""Head masking: switch attention heads off and see one window's forecast change.

page.py is the Streamlit script (it only draws); the other modules hold what only this screen uses."""
