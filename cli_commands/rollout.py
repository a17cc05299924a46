"""`rollout`: attention rollout and flow from the forecast back to the input steps, and their validation."""
from __future__ import annotations

from pathlib import Path

from ._choices import DISTIL_FORMS
from ._common import seed_int, add_checkpoint_and_csv, int_in, HEAD, STEP, number_in, open_checkpoint_and_data, \
    step_bar, write_table


def register(sub) -> None:
    p = sub.add_parser("rollout", help="attention rollout and flow: how much each input step reaches the forecast")
    add_checkpoint_and_csv(p)
    p.add_argument("--out", required=True, type=Path,
                   help="CSV to write (- for standard output): window, method, distil, target_step, source, lag, "
                        "relevance (lag 1 = the last input step; per window, method, distil and target step the "
                        "input lags and the label share sum to 1)")
    p.add_argument("--validation-out", type=Path, default=None,
                   help="CSV of the validation (method, against, rho, rho_low, rho_high); default: beside --out as "
                        "F.validation.csv")
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--windows", type=int_in(1, 4096), default=16,
                   help="windows, spread evenly over the split (default 16)")
    p.add_argument("--method", choices=("rollout", "flow", "both"), default="both")
    p.add_argument("--distil", choices=DISTIL_FORMS + ("all",), default="routed",
                   help="the distilling step's transfer: routed (the max-pool's winners, default), structural "
                        "(the taps alone), jacobian (first order), or all three")
    p.add_argument("--alpha", type=number_in(0.0, 1.0), default=0.5,
                   help="attention's share of each layer, α in α·A + (1 − α)·I (default 0.5, Abnar & Zuidema)")
    p.add_argument("--head", type=HEAD, default=None, help="one head of every layer (default: their mean)")
    p.add_argument("--step", type=STEP, default=None,
                   help="one horizon step, 1 = the first (default: every step)")
    p.add_argument("--no-validation", dest="validation", action="store_false",
                   help="skip the Spearman ρ against blank-out ΔMSE and Integrated Gradients")
    p.add_argument("--seed", type=seed_int, default=0, help="ProbSparse key-sample seed")
    p.set_defaults(func=run)


def validation_path(out: Path, given: Path | None) -> Path | None:
    if given is not None:
        return given
    if str(out) == "-":
        return None
    return out.with_name(out.name[:-4] + ".validation.csv" if out.name.endswith(".csv") else out.name + ".validation.csv")


def run(args) -> int:
    from informer_lab.analysis.errors import count

    import numpy as np

    from informer_lab.analysis.anatomy.relevance import validate, windows_relevance

    checkpoint, prepared = open_checkpoint_and_data(args)
    model = checkpoint.model
    if args.head is not None and args.head >= model.config.n_heads:
        raise ValueError(f"--head must be below the model's {model.config.n_heads} heads, got {args.head}")
    methods = ("rollout", "flow") if args.method == "both" else (args.method,)
    distils = DISTIL_FORMS if args.distil == "all" else (args.distil,)
    result = windows_relevance(model, prepared, args.split, windows=args.windows, methods=methods, distils=distils,
                               alpha=args.alpha, head=args.head, steps=args.step, seed=args.seed,
                               progress=step_bar("rollout"))
    write_table(result.table, args.out)
    lines = [f"{count(len(result.windows), args.split + ' window')} × {', '.join(methods)} × {', '.join(distils)}, α = "
             f"{args.alpha}, {'head ' + str(args.head) if args.head is not None else 'mean of the heads'}; "
             f"{len(result.table):,} rows written to {args.out}"]
    for (method, distil), inputs in result.inputs.items():
        mean = inputs.mean(axis=0)
        top = mean.argsort(kind="stable")[::-1][:3]
        lags = ("every input step alike" if np.ptp(mean) <= 1e-12 else
                ", ".join(f"lag {prepared.spec.seq_len - s}" for s in top))
        label = result.table.query("method == @method and distil == @distil and source == 'label'")["relevance"].mean()
        lines.append(f"{method} ({distil}): most relevant {lags}; label share {label:.3f}")
    if args.validation:
        table = validate(model, prepared, result, seed=args.seed)
        target = validation_path(args.out, args.validation_out)
        if target is not None:
            write_table(table, target)
        for r in table.itertuples():
            interval = f"[{r.rho_low:+.2f}, {r.rho_high:+.2f}]" if r.rho_low == r.rho_low else f"({r.reason})"
            lines.append(f"ρ {r.method}/{r.distil} vs {r.against}: {r.rho:+.3f} {interval}")
        if target is not None:
            lines.append(f"validation written to {target}")
    print("\n".join(lines))
    return 0
