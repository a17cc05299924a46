"""Attribution: Integrated Gradients of one forecast value over its encoder window.

page.py is the Streamlit script (it only draws); the other modules hold what only this screen uses."""
