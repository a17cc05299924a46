"""Informer Lab's launcher: the `informer-lab` command (also `python -m informer_lab`).

    informer-lab [ui] [--port N] [--no-browser] [--window] [--new]   serve the app on this machine and open it
    informer-lab list                                                 this user's running labs
    informer-lab stop [PORT|all]                                      stop them, and every process they started
    informer-lab train|evaluate|forecast|study|...                    every command of `python cli.py` (one parser)

    home.py      where the lab keeps its runs and studies (one folder per user, or the source checkout's)
    running.py   the records of running labs (owner-only files) and stopping a process tree
    launch.py    `ui`: a free loopback port, the server as a child process, its health, the browser or a window
"""
__version__ = "0.1.0"
