"""The st.App that serves the lab (app.py); nothing else lives in this folder (see app.py)."""
