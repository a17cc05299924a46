"""One module per `python cli.py` command; each defines `register(subparsers)`."""
