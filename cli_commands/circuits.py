"""`circuits`: composition scores, attribution patching against exact patching, and path patching, as three CSVs."""
from __future__ import annotations

from pathlib import Path

import argparse

from ._common import HEAD, add_checkpoint_and_csv, int_in, seed_int, shown

MAX_DEFAULT_RECEIVERS = 8
MAX_RECEIVERS = 64  # each receiver is one path-patching run over every pair
WHATS = ("q", "k", "v", "out")  # analysis.circuits.paths.WHATS


def head_of(text: str, parts: int) -> list[str]:
    """SITE:HEAD (parts 2) or SITE:HEAD:WHAT (parts 3, WHAT also after a dot) split and checked for its form."""
    items = str(text).strip().replace(".q", ":q").replace(".k", ":k").replace(".v", ":v").replace(".out", ":out")
    found = items.split(":")
    if len(text) > 200 or len(found) != parts or not found[0]:
        form = "SITE:HEAD" if parts == 2 else "SITE:HEAD:WHAT"
        raise argparse.ArgumentTypeError(f"expected {form}, e.g. {'cross.0:2' if parts == 2 else 'cross.0:2:q'}, "
                                         f"got {shown(text)}")
    try:
        HEAD(found[1])
    except argparse.ArgumentTypeError as err:
        raise argparse.ArgumentTypeError(f"{shown(text)}: the head: {err}") from None
    if parts == 3 and found[2] not in WHATS:
        raise argparse.ArgumentTypeError(f"a receiver reads one of {', '.join(WHATS)}, got {shown(text)}")
    return found


def sender_text(text: str) -> str:
    """An argparse type: SITE:HEAD."""
    head_of(text, 2)
    return str(text).strip()


def receivers_list(text: str) -> list[str]:
    """An argparse type: SITE:HEAD:WHAT separated by commas, 1 to MAX_RECEIVERS distinct ones."""
    text = str(text)
    items = list(dict.fromkeys(r.strip() for r in text.split(",", MAX_RECEIVERS * 4) if r.strip()))
    if not items or len(items) > MAX_RECEIVERS or text.count(",") >= MAX_RECEIVERS * 4:
        raise argparse.ArgumentTypeError(f"expected 1 to {MAX_RECEIVERS} receivers separated by commas, got "
                                         f"{shown(text)}")
    for item in items:
        head_of(item, 3)
    return items


receivers_list.items = MAX_RECEIVERS
sender_text.chars = 200


def register(sub) -> None:
    p = sub.add_parser("circuits", help="which heads work together: composition, AtP against exact patching, path "
                                        "patching")
    add_checkpoint_and_csv(p)
    p.add_argument("--out", required=True, type=Path,
                   help="folder to write composition.csv, atp.csv, atp_heads.csv and path.csv into")
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--pairs", type=int_in(1, 4096), default=64,
                   help="pairs of windows (A patched into B, B half the split later) for AtP and exact patching "
                        "(default 64)")
    p.add_argument("--path-pairs", type=int_in(1, 4096), default=None,
                   help="pairs for path patching (default: as many as fit one seq_len + pred_len apart, 4 to 32, so "
                        "that they are independent stretches and an interval exists)")
    p.add_argument("--sender", default=None, type=sender_text,
                   help="path patching's sender SITE:HEAD (default: of the heads with heads after them, the one whose "
                        "exact patch moves the forecast most on average)")
    p.add_argument("--receivers", default=None, type=receivers_list,
                   help=f"comma-separated SITE:HEAD:WHAT, WHAT in q, k, v, out; each receiver is one path (at most "
                        f"{MAX_RECEIVERS}; default: the output of each head the sender reaches, at most "
                        f"{MAX_DEFAULT_RECEIVERS})")
    p.add_argument("--draws", type=int_in(10, 100_000), default=200,
                   help="random matrices per shape for the composition baseline (default 200)")
    p.add_argument("--seed", type=seed_int, default=0, help="key-sample and random-baseline seed")
    p.set_defaults(func=run)


def default_receivers(model, sender: str) -> list[str]:
    """The output of each head the sender reaches, in execution order, at most MAX_DEFAULT_RECEIVERS."""
    from informer_lab.analysis.circuits.reach import reachable

    site = next(s for s in model.sites if s.name == sender.rpartition(":")[0])
    return [f"{s.name}:{h}:out" for s, what in reachable(model, site) if what == "out"
            for h in range(model.config.n_heads)][:MAX_DEFAULT_RECEIVERS]


def senders_reaching(model, receivers) -> list[str]:
    """The sites whose heads reach every receiver (all sites with a site after them, when none are given)."""
    from informer_lab.analysis.circuits.reach import why_unreached

    sites = {s.name: s for s in model.sites}
    return [s.name for s in model.sites
            if all(why_unreached(s, sites[r.site], r.what) is None for r in receivers or ())
            and any(why_unreached(s, t, "out") is None for t in model.sites)]


def run(args) -> int:
    import pandas as pd

    from informer_lab.analysis.circuits.attribution import atp_vs_exact, independent_pairs
    from informer_lab.analysis.circuits.composition import composition_scores
    from informer_lab.analysis.circuits.paths import path_patching

    from ._common import open_checkpoint_and_data

    checkpoint, prepared = open_checkpoint_and_data(args)
    model = checkpoint.model
    receivers = args.receivers
    from informer_lab.analysis.circuits.paths import resolve_receivers, resolve_sender
    from informer_lab.analysis.circuits.reach import check_reachable
    from informer_lab.analysis.errors import ConfigError

    wanted = resolve_receivers(model, receivers) if receivers else ()  # checked before any work
    if args.sender is not None:
        check_reachable(model, *resolve_sender(model, args.sender), wanted)
    candidates = senders_reaching(model, wanted)
    if not candidates:
        raise ConfigError(f"no head reaches every receiver of --receivers {','.join(receivers)}: choose receivers "
                          "that one sender's patch can reach, or give --sender")
    composition = composition_scores(model, draws=args.draws, seed=args.seed)
    atp = atp_vs_exact(model, prepared, args.split, pairs=args.pairs, seed=args.seed)
    sender = args.sender
    if sender is None:  # the head with the largest exact patch among those that reach the receivers
        upstream = atp.heads[atp.heads["site"].isin(candidates)]
        top = upstream.assign(size=upstream["exact"].abs()).sort_values("size", ascending=False).iloc[0]
        sender = f"{top['site']}:{int(top['head'])}"
    receivers = receivers or default_receivers(model, sender)
    path_pairs = args.path_pairs or independent_pairs(prepared, args.split)
    tables = [path_patching(model, prepared, args.split, sender, [r], pairs=path_pairs, seed=args.seed).table
              for r in receivers]
    path = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(
        columns=["sender", "receiver", "step", "delta", "low", "high"])
    from informer_lab.analysis.outputs import write_folder

    write_folder(args.out, {name: table.to_csv(index=False).encode("utf-8") for name, table in  # put in place whole
                            (("composition.csv", composition.table), ("atp.csv", atp.table),
                             ("atp_heads.csv", atp.heads), ("path.csv", path))})

    scored = composition.table.dropna(subset=["score"])
    above = int(scored["above_q95"].sum())
    rho = atp.rho
    interval = f"[{rho.lo:+.3f}, {rho.hi:+.3f}]" if rho.lo == rho.lo else f"({rho.reason})"
    disagree = ", ".join(f"{r.site}:{r.head}" for r in atp.heads[atp.heads["disagree"]].itertuples()) or "none"
    lines = [f"composition: {len(scored)} scores, {above} above the random 95 % quantile (≈5 % by chance); highest "
             + "; ".join(f"{r.sender}→{r.receiver} {r.kind} {r.score:.3f}" for r in
                         scored.sort_values("score", ascending=False).head(3).itertuples()),
             f"AtP vs exact on {len(atp.pairs.clean)} pairs: Spearman ρ {rho.estimate:+.3f} {interval}; heads that "
             f"disagree (BH): {disagree}; AtP {atp.atp_seconds:.2f} s, exact {atp.exact_seconds:.2f} s",
             f"path patching from {sender} into {len(receivers)} receiver(s), {path_pairs} pairs",
             f"written to {args.out}: composition.csv, atp.csv, atp_heads.csv, path.csv"]
    print("\n".join(lines))
    return 0
