"""Studies: many models (seeds × settings) trained and analysed on Ray; their runs, findings and head roles.

page.py is the Streamlit script (it only draws); the other modules hold what only this screen uses."""
