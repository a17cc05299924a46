"""Query/key map: one head's queries and keys of many windows in one 2-D map (analysis.instruments.qk_map).

page.py is the Streamlit script (it only draws); the other modules hold what only this screen uses."""
