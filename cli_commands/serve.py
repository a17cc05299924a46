"""`ui`, `list` and `stop`: serve the app on this machine, list this user's running labs, stop them
(informer_lab.launch and informer_lab.running). `informer-lab` with no command runs `ui`."""
from __future__ import annotations

import argparse
import time

from informer_lab.source import command

from ._common import int_in, shown, text

PORT = int_in(1, 65535)


def port_or_all(value: str) -> str:
    """An argparse type: a port (1 … 65535) or all."""
    if str(value).strip().lower() == "all":
        return "all"
    try:
        return str(PORT(value))
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a port from 1 to 65,535 or all, got {shown(value)}") from None


port_or_all.bounds = PORT.bounds


def register(sub) -> None:
    p = sub.add_parser("ui", help="serve the app on this machine and open it in the browser")
    p.add_argument("--port", type=PORT, default=None,
                   help="serve on this port (default: 8501, or the next free one when it is taken)")
    p.add_argument("--host", default="127.0.0.1", type=text(255),
                   help="the address to bind (default: this machine only); any other serves the network and asks "
                        "every visitor for the access token printed at start")
    p.add_argument("--no-browser", dest="browser", action="store_false", help="do not open a browser")
    p.add_argument("--window", action="store_true",
                   help="open a native window instead of the browser (pip install 'informer-lab[desktop]')")
    p.add_argument("--new", action="store_true", help="start another lab even when one is running")
    p.set_defaults(func=run_ui)

    p = sub.add_parser("list", help="list this user's running labs (port, pid, folder, started)")
    p.set_defaults(func=run_list)

    p = sub.add_parser("stop", help="stop a running lab and every process it started")
    p.add_argument("target", nargs="?", default=None, metavar="PORT|all", type=port_or_all,
                   help="the lab's port, or all (default: the only running lab)")
    p.set_defaults(func=run_stop)


def run_ui(args) -> int:
    from informer_lab import launch

    try:
        return launch.serve(port=args.port, host=args.host, browser=args.browser, window=args.window, new=args.new)
    except launch.LaunchError as err:
        raise ValueError(str(err)) from None  # one line on stderr, exit 2 (cli.main)


def _survey():
    """The trusted labs; a note on stderr for each record skipped (informer_lab.running.survey)."""
    import sys

    from informer_lab import running

    found = running.survey()
    for line in found.skipped:
        print(f"note: {line}", file=sys.stderr)
    return found.labs


def run_list(args) -> int:
    labs = _survey()
    if not labs:
        print(f"No lab is running ({command('ui')} starts one).")
        return 0
    print(f"{'port':>5}  {'pid':>7}  {'started':16}  url / folder")
    for lab in labs:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(lab.started))
        print(f"{lab.port:>5}  {lab.pid:>7}  {started:16}  {lab.url}  {lab.folder}")
    return 0


def run_stop(args) -> int:
    from informer_lab import running

    labs = _survey()
    if args.target == "all":
        chosen = labs
    elif args.target is None:
        if len(labs) > 1:
            raise ValueError(f"{len(labs)} labs are running (ports {', '.join(str(lab.port) for lab in labs)}); "
                             f"name one: {command('stop PORT')}, or {command('stop all')}")
        chosen = labs
    else:
        chosen = [lab for lab in labs if lab.port == int(args.target)]
        if not chosen:
            raise ValueError(f"no lab of yours runs on port {args.target} ({command('list')} shows the running ones)")
    if not chosen:
        print("No lab is running.")
        return 0
    failed = 0
    for lab in chosen:
        survivors = running.stop(lab)
        if survivors:
            failed += 1
            print(f"port {lab.port}: processes {survivors} did not stop")
        else:
            print(f"Stopped the lab on port {lab.port} (pid {lab.pid}).")
    return 1 if failed else 0
