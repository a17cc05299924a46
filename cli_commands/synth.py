"""`synth`: a series with a planted answer (a CSV and FILE.answer.json beside it).

    python cli.py synth --kind seasonal_ar --rows 10080 --lags 24 --coefs 0.9 --out planted.csv
    python cli.py synth --kind seasonal_ar --lags 24,168 --coefs 0.6,0.3 --freq h --seed 3 --out two-lags.csv
    python cli.py synth --kind driver --driver-lag 6 --irrelevant 3 --out driver.csv
    python cli.py synth --kind seasonal_ar --decoys 1 --out decoy.csv    # a column with y's season, unread by y
    python cli.py synth --kind spikes --events 30 --spike 8 --out spikes.csv
    python cli.py synth --kind regime --regime-lags 24,12 --regime-length 720 --out regime.csv
"""
from __future__ import annotations

from pathlib import Path

from ._choices import SYNTH_KINDS, SYNTH_LIMITS
from ._common import bounded_text, int_in, int_list, number_in, number_list, seed_int, text

ROWS = SYNTH_LIMITS["rows"]
LAGS = int_list(1, ROWS, most=2, what="lags")
from ._output import write_data


def register(sub) -> None:
    p = sub.add_parser("synth", help="generate a series with a planted answer (CSV + FILE.answer.json)")
    p.add_argument("--kind", choices=SYNTH_KINDS, default="seasonal_ar",
                   help="seasonal_ar: y_t = φ·y_{t−s} (+ a second lag) + e; driver: y also reads a driver column at "
                        "--driver-lag; spikes: seasonal_ar with spikes at known times; regime: the seasonal lag "
                        "switches between two values at known times")
    p.add_argument("--rows", type=int_in(1, ROWS), default=10_080)
    p.add_argument("--freq", default="h", type=bounded_text(chars=40), help="a pandas step alias: h, 15min, D, W-SUN, MS, …")
    p.add_argument("--start", default="2024-01-01", type=text(60), help="the first timestamp")
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument("--lags", type=LAGS, default=(24,), help="the target's seasonal lag(s), e.g. 24 or 24,168")
    p.add_argument("--coefs", type=number_list(-10, 10, most=2), default=None,
                   help="their coefficients (default 0.9 for one lag, 0.6,0.3 for two); regime: one for both "
                        "regimes or regime A's,B's (0.9,-0.9 with --regime-lags 24,24 flips the season's sign)")
    p.add_argument("--noise", type=number_in(0, 1e6, low_open=True), default=1.0, help="innovation σ of the target")
    p.add_argument("--irrelevant", type=int_in(0, SYNTH_LIMITS["irrelevant"]), default=1, help="columns the target never reads")
    p.add_argument("--decoys", type=int_in(0, SYNTH_LIMITS["decoys"]), default=0,
                   help="seasonal columns with the target's own lag and coefficient that the target never reads: a "
                        "self-test checks that no instrument names them")
    p.add_argument("--driver-lag", type=int_in(1, ROWS), default=6)
    p.add_argument("--driver-coef", type=number_in(-10, 10), default=0.8)
    p.add_argument("--driver-rho", type=number_in(-1, 1, low_open=True, high_open=True), default=0.8)
    p.add_argument("--events", type=int_in(0, ROWS), default=20, help="spikes: how many")
    p.add_argument("--spike", type=number_in(0, 1000), default=8.0, help="spikes: size in units of the innovation σ")
    p.add_argument("--regime-lags", type=LAGS, default=(24, 12))
    p.add_argument("--regime-length", type=int_in(2, ROWS), default=720, help="regime: mean steps between switches")
    p.add_argument("--out", required=True, type=Path, help="the CSV to write; its answer goes to FILE.answer.json")
    p.set_defaults(func=run)


def spec_of(args):
    """The SynthSpec of the arguments; a ConfigError naming the flag for what cannot make a file."""
    import pandas as pd
    from pandas.tseries.frequencies import to_offset

    from informer_lab.analysis.data import describe_frequency
    from informer_lab.analysis.errors import ConfigError
    from informer_lab.analysis.planted.synth import SynthSpec

    coefs = args.coefs if args.coefs is not None else ((0.9,) if len(args.lags) == 1 else (0.6, 0.3))
    if len(args.regime_lags) != 2:
        raise ConfigError(f"--regime-lags takes two lags, got {list(args.regime_lags)}")
    try:
        step = to_offset(args.freq)
    except (ValueError, TypeError):
        raise ConfigError(f"--freq {args.freq!r} is no pandas step alias; use e.g. h, 15min, D, W-SUN, MS") from None
    if getattr(step, "n", 1) < 1:
        raise ConfigError(f"--freq {args.freq!r}: the step must be positive, e.g. 1h or 15min")
    try:
        describe_frequency(args.freq)
        pd.date_range(args.start, periods=2, freq=args.freq)
    except (ValueError, TypeError, OverflowError) as err:
        raise ConfigError(f"--freq {args.freq!r} / --start {args.start!r}: {str(err)[:120]}") from None
    return SynthSpec(kind=args.kind, rows=args.rows, freq=args.freq, start=args.start, seed=args.seed,
                     lags=tuple(args.lags), coefs=tuple(coefs), noise=args.noise, irrelevant=args.irrelevant,
                     decoys=args.decoys, driver_lag=args.driver_lag, driver_coef=args.driver_coef,
                     driver_rho=args.driver_rho, events=args.events, spike=args.spike,
                     regime_lags=tuple(args.regime_lags), regime_length=args.regime_length)


def run(args) -> int:
    from informer_lab.analysis.data import describe_frequency
    from informer_lab.analysis.errors import ConfigError
    from informer_lab.analysis.planted.synth import answer_json, answer_path, generate

    if str(args.out) == "-":
        raise ConfigError("--out must be a file: the answer is written beside it as FILE.answer.json")
    spec = spec_of(args)
    frame, answer = generate(spec)
    where = write_data(frame.to_csv(index=False).encode("utf-8"), args.out)
    answer_file = answer_path(args.out)
    write_data(answer_json(answer).encode("utf-8"), answer_file, "--out")
    pred = 24
    relevant = ", ".join(f"{r['column']}@{r['lag']}" + (f" (regime {r['regime']})" if r["regime"] else "")
                         for r in answer.relevant)
    print(f"{spec.kind}: {spec.rows:,} rows of {describe_frequency(spec.freq)} data, columns "
          f"{', '.join(answer.columns)} (target {answer.target}); relevant (column, lag): {relevant}"
          + (f"; {len(answer.events)} planted events" if answer.events else ""))
    print(f"Bayes MSE of {answer.target} (standardised): h=1 {answer.bayes_mse[answer.target][0]:.4f}, mean over "
          f"h=1…{pred} {answer.bayes_for([answer.target], pred):.4f} (features S/MS); over every column "
          f"{answer.bayes_for(answer.columns, pred):.4f} (features M)")
    print(f"written {where} and {answer_file}")
    return 0
