"""Findings across the runs of a study, from its joined tables (pure pandas; no Ray, no torch).

Per setting (the grid values; one group when there is no grid):
- test error: mean, spread and t interval over seeds (analysis.intervals.across_seeds);
- heads matched by their lag profiles to the first seed's heads (analysis.heads.roles), so that "head 2 of
  decoder_self.0" means the same head in every seed; the role × seed matrix; the roles found in every seed;
- removable heads: per run, the heads shown to cost under 5 % of the baseline (one-sided test, Benjamini–Hochberg
  across the run's heads: analysis.heads.lists), beside the raw count (the interval alone) and the count by point
  estimates; over seeds: mean, min and max over the runs that have intervals. A run whose sweep scored too few
  windows for an interval counts no head as removable and is named (`runs_without_interval`);
- importance stability: the Spearman ρ of matched heads' ΔMSE (and gradient importance) between seeds, with a t
  interval over seeds (the jackknife of the pairwise mean);
- top-u agreement: overlap@u per matched head over seeds;
- the forecast lens: each lens and layer's MSE over seeds (mean, spread, t interval over seeds; analysis.anatomy.lens);
- direct shares: per column, the mean |direct share| of each seed's k-th largest decoder head over seeds (k = 1 … 3:
  ranks need no matching of heads between seeds), and the site of each seed's largest head;
- composition: per sender → receiver pair of matched heads (the role matrix's matching; without the roles analysis,
  heads by index, and the findings say so), the score over seeds with its t interval and the seeds above the random
  95 % quantile;
- features (when the study ran them): each run's dictionary of the memory — FVU, L0, dead fraction and the spliced
  ΔMSE over seeds — and the dictionaries of the runs matched feature to feature (Hungarian on decoder cosine,
  analysis.features.seeds) against shuffled ones. Different seeds are different models whose residual streams share
  no basis: a high matched cosine says they learned alike, a low one is expected;
- the model against seasonal naive per run (`model_vs_baselines`), with a warning that qualifies every finding above
  when some runs' models are no better than it.

Writes tables/findings_*.csv and findings.json beside them; returns the findings dict.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from informer_lab.analysis.heads.lists import REMOVABLE, head_lists
from informer_lab.analysis.heads.roles import HeadProfiles, importance_stability, role_matrix
from informer_lab.analysis.intervals import across_seeds

from .folder import csv_bytes, write_bytes, write_json
from .tables import read_joined


TOP_SHARES = 3  # the decoder heads ranked by direct share whose shares are summarised over seeds


def _settings(table: pd.DataFrame) -> list[str]:
    return [c for c in table.columns if c.startswith("setting_")]


def _groups(table: pd.DataFrame):
    keys = _settings(table)
    if not keys:
        yield "all", table
        return
    for values, part in table.groupby(keys, sort=False):
        values = values if isinstance(values, tuple) else (values,)
        yield ", ".join(f"{k[len('setting_'):]}={v}" for k, v in zip(keys, values)), part


def _profiles(roles: pd.DataFrame, long: pd.DataFrame) -> dict[str, HeadProfiles]:
    """Each run's HeadProfiles rebuilt from the study tables (roles.csv and profiles.csv)."""
    lags = np.arange(int(long["lag"].min()), int(long["lag"].max()) + 1)
    out = {}
    for run, table in roles.groupby("run", sort=False):
        sites = list(table["site"].unique())
        H = int(table["head"].max()) + 1
        mass = np.zeros((len(sites), H, len(lags)))
        part = long[long["run"] == run]
        s = part["site"].map({name: i for i, name in enumerate(sites)}).to_numpy()
        np.add.at(mass, (s, part["head"].to_numpy(), part["lag"].to_numpy() - lags[0]), part["mass"].to_numpy())
        out[run] = HeadProfiles(lags, mass, table.drop(columns=["run"]).reset_index(drop=True), ())
    return out


def summarise(out: str | Path) -> dict:
    out = Path(out)
    tables = out / "tables"
    read, notes = {}, []
    for name in ("errors", "sweep", "importance", "agreement", "roles", "profiles", "lens", "shares", "composition",
                 "features"):
        table = read_joined(out, name)
        if table is not None:
            read[name] = table
        elif (tables / f"{name}.csv").exists():
            notes.append(f"tables/{name}.csv cannot be read: the findings that need it are left out")
    findings: dict = {"settings": {}, "notes": notes}
    for setting, errors in _groups(read["errors"]) if "errors" in read else ():
        ours = errors[errors["model"] == "informer"]
        summary = across_seeds(ours.assign(key="informer"), ["key"], "mse", floor=0.0).iloc[0].to_dict()
        findings["settings"].setdefault(setting, {})["test_mse"] = {k: v for k, v in summary.items() if k != "key"}
        findings["settings"][setting]["model_vs_baselines"] = _against_seasonal_naive(errors)
    matrices = []
    if "roles" in read and "profiles" in read:
        for setting, roles in _groups(read["roles"]):
            runs = list(dict.fromkeys(roles["run"]))
            seeds = dict(zip(roles["run"], roles["seed"]))
            profiles = _profiles(roles.drop(columns=["seed", *_settings(roles)]),
                                 read["profiles"][read["profiles"]["run"].isin(runs)])
            matrix = role_matrix(profiles, seeds).assign(setting=setting)
            matrices.append(matrix)
            every = matrix[matrix["in_every_seed"]]
            entry = findings["settings"].setdefault(setting, {})
            entry["roles_in_every_seed"] = every["role"].value_counts().to_dict()
            entry["heads_with_a_stable_role"] = f"{len(every)} of {len(matrix)}"
            entry.update(_stability(matrix, read, runs, seeds))
        write_bytes(tables / "findings_roles.csv", csv_bytes(pd.concat(matrices, ignore_index=True)))
    if "sweep" in read:
        rows = []
        for setting, sweep in _groups(read["sweep"]):
            for run, part in sweep.groupby("run", sort=False):
                lists = head_lists(part.reset_index(drop=True))
                heads = lists.table
                tested = lists.tested > 0
                rows.append({"setting": setting, "run": run, "seed": int(part["seed"].iloc[0]), "heads": len(heads),
                             "tested": lists.tested,
                             "removable_with_interval": int(heads["removable"].sum()) if tested else np.nan,
                             "removable_raw": int(heads["removable_raw"].sum()) if tested else np.nan,
                             "removable_by_point": int((heads["delta_mse"] < REMOVABLE * lists.baseline_mse).sum()),
                             "interval": "" if tested else str(heads["interval"].iloc[0] or "no interval")})
        removable = pd.DataFrame(rows)
        write_bytes(tables / "findings_removable.csv", csv_bytes(removable))
        for setting, part in removable.groupby("setting", sort=False):
            shown = part[part["tested"] > 0]
            entry = {"by_point_mean": float(part["removable_by_point"].mean()), "heads": int(part["heads"].iloc[0]),
                     "runs_with_interval": len(shown), "runs": len(part),
                     "runs_without_interval": part.loc[part["tested"] == 0, "run"].tolist(),
                     "method": "one-sided test of ΔMSE < 5 % of the baseline, Benjamini–Hochberg at q = 0.05 across "
                               "each run's heads"}
            if len(shown):
                entry.update({"with_interval_mean": float(shown["removable_with_interval"].mean()),
                              "with_interval_min": int(shown["removable_with_interval"].min()),
                              "with_interval_max": int(shown["removable_with_interval"].max()),
                              "raw_mean": float(shown["removable_raw"].mean())})
            else:
                entry["no_interval"] = (f"no run's sweep scored enough windows for an interval "
                                        f"({part['interval'].iloc[0]}): no head is counted as removable")
            findings["settings"].setdefault(setting, {})["removable"] = entry
    if "lens" in read:
        frames = []
        for setting, lens in _groups(read["lens"]):
            table = across_seeds(lens, ["lens", "layer"], "mse", floor=0.0).assign(setting=setting)
            frames.append(table)
            findings["settings"].setdefault(setting, {})["lens_mse"] = {
                f"{r.lens} {r.layer}": {"mean": r.mse_mean, "lo": r.mse_seeds_lo, "hi": r.mse_seeds_hi,
                                        "seeds": int(r.seeds)} for r in table.itertuples()}
        write_bytes(tables / "findings_lens.csv", csv_bytes(pd.concat(frames, ignore_index=True)))
    if "shares" in read:
        frames = []
        for setting, shares in _groups(read["shares"]):
            top = shares[shares["rank"] <= TOP_SHARES]
            table = across_seeds(top, ["column", "rank"], "mean_abs", floor=0.0).assign(setting=setting)
            first = shares[shares["rank"] == 1]
            sites = first.assign(site=first["part"].str.rpartition(":")[0]).groupby("column")["site"]
            table["largest_head_sites"] = table["column"].map(
                lambda c: "; ".join(f"{k}: {v}" for k, v in sites.get_group(c).value_counts().items()))
            frames.append(table)
            findings["settings"].setdefault(setting, {})["top_direct_shares"] = {
                f"{r.column} rank {r.rank}": {"mean": r.mean_abs_mean, "lo": r.mean_abs_seeds_lo,
                                              "hi": r.mean_abs_seeds_hi, "largest_head_sites": r.largest_head_sites}
                for r in table.itertuples()}
        write_bytes(tables / "findings_shares.csv", csv_bytes(pd.concat(frames, ignore_index=True)))
    if "composition" in read:
        frames = [_composition(part, matrices, setting) for setting, part in _groups(read["composition"])]
        table = pd.concat(frames, ignore_index=True)
        write_bytes(tables / "findings_composition.csv", csv_bytes(table))
        for setting, part in table.groupby("setting", sort=False):
            shown = part.dropna(subset=["score_seeds_lo"])
            findings["settings"].setdefault(setting, {})["composition"] = {
                "pairs": len(part), "matched_by": part["matched_by"].iloc[0],
                "above_random_q95_in_every_seed": int((part["above_in"] == part["seeds"]).sum()),
                "lower_bound_above_random_q95": int((shown["score_seeds_lo"] > shown["random_q95"]).sum())}
    if "features" in read:
        frames = []
        for setting, part in _groups(read["features"]):
            table, entry = _features(part)
            frames.append(table.assign(setting=setting))
            findings["settings"].setdefault(setting, {})["features"] = entry
        write_bytes(tables / "findings_features.csv", csv_bytes(pd.concat(frames, ignore_index=True)))
    write_json(out / "findings.json", findings)
    return findings


FEATURE_FIGURES = ("fvu", "l0", "dead_fraction", "spliced_delta_mse", "relative_delta")


def _features(table: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Each dictionary's figures over seeds, and the dictionaries matched across the runs."""
    from informer_lab.analysis.features.seeds import stability

    runs = table.groupby("run", sort=False)
    first = runs.head(1)
    frames = [across_seeds(first.assign(key=figure), ["key"], figure).drop(columns="key")
              .rename(columns=lambda c, f=figure: c.replace(f"{f}_", "")).assign(figure=figure)
              for figure in FEATURE_FIGURES]
    summary = pd.concat(frames, ignore_index=True)
    entry = {r.figure: {"mean": r.mean, "lo": r.seeds_lo, "hi": r.seeds_hi, "seeds": int(r.seeds)}
             for r in summary.itertuples()}
    entry["site"] = str(first["site"].iloc[0])
    weights = [c for c in table.columns if c.startswith("w") and c[1:].isdigit()]
    dictionaries = [part[weights].to_numpy(dtype=np.float64).T for _, part in runs]
    if len(dictionaries) >= 2 and len({d.shape for d in dictionaries}) == 1:
        st = stability(dictionaries)
        entry["matched_cosine"] = {"mean": st.stability.estimate, "lo": st.stability.lo, "hi": st.stability.hi,
                                   "shuffled": st.shuffled.estimate, "matched_share": st.matched_share,
                                   "above_shuffled": bool(st.above_control)}
    return summary, entry


def _composition(table: pd.DataFrame, matrices: list[pd.DataFrame], setting: str) -> pd.DataFrame:
    """Composition scores over seeds per (sender, receiver, kind) of heads matched across seeds: each run's
    "site:head" renamed to the first seed's head it matches (the role matrix), or kept by index without roles."""
    matrix = next((m for m in matrices if m["setting"].iloc[0] == setting), None)
    rename: dict[tuple[int, str], str] = {}
    if matrix is not None:
        seeds = [int(c.split()[1]) for c in matrix.columns if c.startswith("seed ")]
        for row in matrix.itertuples():
            for seed, head in zip(seeds, str(row.heads).split(";")):
                rename[(seed, f"{row.site}:{head}")] = f"{row.site}:{row.ref_head}"
    table = table.copy()
    for column in ("sender", "receiver"):
        table[column] = [rename.get((int(s), h), h) for s, h in zip(table["seed"], table[column])]
    table["above"] = table["above_q95"].astype(bool).astype(int)
    out = across_seeds(table, ["sender", "receiver", "kind"], "score", floor=0.0)
    extra = table.groupby(["sender", "receiver", "kind"], sort=False).agg(random_q95=("random_q95", "mean"),
                                                                          above_in=("above", "sum")).reset_index()
    out = out.merge(extra, on=["sender", "receiver", "kind"])
    return out.assign(setting=setting, matched_by="lag profiles (role matrix)" if matrix is not None else
                      "head index (no roles analysis: heads of different seeds are not matched)")


def _against_seasonal_naive(errors: pd.DataFrame) -> dict:
    """In how many runs the model is worse than seasonal naive (its paired ΔMSE interval above 0) or no better (the
    interval holds 0; the point estimate without one): what those runs' heads do may explain little."""
    naive = errors[errors["model"] == "seasonal_naive"]
    if naive.empty:
        return {}
    delta, lo, hi = -naive["delta_mse"], -naive["delta_mse_hi"], -naive["delta_mse_lo"]  # model − seasonal naive
    worse = int((lo > 0).sum())  # a verdict needs an interval: runs without one are counted apart
    not_better = int((hi >= 0).sum())
    undecided = int(lo.isna().sum())
    out = {"runs": len(naive), "worse_than_seasonal_naive": worse, "not_better_than_seasonal_naive": not_better,
           "runs_without_interval": undecided, "delta_mse_mean": float(delta.mean())}
    if not_better or undecided:
        out["warning"] = (f"in {not_better} of {len(naive)} runs the model is no better than seasonal naive ({worse} "
                          f"worse with the interval; mean ΔMSE {float(delta.mean()):+.3g})"
                          + (f" and {undecided} run{'s' if undecided != 1 else ''} had too few windows for a verdict"
                             if undecided else "") + ": their head roles, removable heads and agreement may explain "
                          "little")
    return out


def _stability(matrix: pd.DataFrame, read: dict, runs: list[str], seeds: dict) -> dict:
    """Spearman ρ of matched heads' importance between seeds (ΔMSE of the sweep, and gradient importance)."""
    out = {}
    heads = matrix["heads"].str.split(";", expand=True).astype(int)  # [matched heads, runs]
    for analysis, column in (("sweep", "delta_mse"), ("importance", "importance")):
        if analysis not in read:
            continue
        table = read[analysis]
        values = {}
        for j, run in enumerate(runs):
            part = table[table["run"] == run].set_index(["site", "head"])[column]
            values[f"seed {seeds[run]}"] = [float(part.get((site, int(h)), np.nan))
                                            for site, h in zip(matrix["site"], heads[j])]
        frame = pd.DataFrame(values).dropna()
        if frame.shape[1] >= 2 and len(frame) >= 3:
            out[f"{analysis}_rank_stability"] = importance_stability(frame)
    return out


def load_findings(out: str | Path) -> dict:
    """findings.json, or {} when it is missing or damaged (not a JSON object)."""
    from .folder import read_json_object

    return read_json_object(Path(out) / "findings.json") or {}


__all__ = ["load_findings", "summarise"]
