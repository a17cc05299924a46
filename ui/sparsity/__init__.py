"""Sparsity explorer: which queries ProbSparse picks per site and head, and how its sampled M̄ agrees with the exact M.

page.py is the Streamlit script (it only draws); the other modules hold what only this screen uses."""
