"""Activation patching: how much of the clean forecast one head's context carries into a corrupted run.

A clean window A and a corrupted input B (another window, or a window edited with `analysis.instruments.window_edits`).
Patching head h of site s runs B with that head's per-head context (after the lazy fill, at the head gate, the
place a head mask acts) replaced by A's, position by position: `gate_heads` with gate 0 and A's context as the
per-window replacement ([1, L_Q, H, D]). Every head is patched in ONE batched pass over variants
(`HeadMask(..., variants=True)`, rows shared until the masks diverge), in chunks of at most `max_rows` variants.

Key samples. Every forward (A's recording, B, each chunk of patched B runs) draws from a generator freshly
seeded with `seed`; draws depend on lengths only, so every run sees the same sample at every layer call and a
patched run differs from B only by the patch.

Restored share, per horizon step t, on the standardised scale (so that columns are comparable):

    restored[t] = Σ_c (f_patched − f_B)[t, c] · (f_A − f_B)[t, c]  /  Σ_c (f_A − f_B)[t, c]²

the component of the patch's effect along the clean − corrupt direction, as a share of that direction's length.
With one output column it IS (f_patched − f_B) / (f_A − f_B). For several columns we prefer it to the ratio of
summed signed differences (columns whose gaps have opposite signs cancel in its denominator, which can then be ~0)
and to the mean of per-column ratios (a column where A and B hardly differ explodes it): here each column weighs
by its own gap, and the denominator is zero only when A and B agree in every column. 0: B's forecast; 1: A's
(along that direction); below 0 or above 1: the patch overshoots. NaN where the gap's RMS over columns is below
`min_gap` (default 1e-4 std: batched and one-at-a-time runs agree to ~1e-6, so smaller gaps are noise).
`summary` pools the same ratio over the steps that are not NaN.

Patch points: "heads" (every head, one at a time, plus every head at once — which does NOT give A, because the
embeddings reach every layer through the residual connections: `all_heads_distance` says how far from A it stays);
"embeddings" (both embedded inputs from A) and "memory" (the whole encoder output and the decoder's embedded
input from A): each carries everything the forecast depends on, so they give A exactly (a check of the machinery;
not for a model with `instance_scaling` or `revin`, whose forecast is rescaled by the window's own statistics, a path
that bypasses every hook site).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from informer_lab.model import Batch, HeadMask, Informer, key_generator, patching, recording

from informer_lab.analysis.data import PreparedData
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.heads.mask_scoring import default_max_rows
from informer_lab.analysis.instruments.window_edits import Edit, edited_batches, parse_edit

PATCH_POINTS = ("heads", "embeddings", "memory")
EVERYTHING = {"embeddings": ("enc_embedding", "dec_embedding"), "memory": ("encoder.out", "dec_embedding")}
ALL_HEADS = "all"  # the site label of the every-head-at-once variant


@dataclass(frozen=True, eq=False)
class PatchResult:
    """Patches of clean window A into corrupted input B. n patches, T = pred_len steps, C = c_out columns.

    table:    one row per (patch, step): site, head (−1: not a head), step (1 … T), restored, gap (RMS over columns
              of f_A − f_B), clean_minus_corrupt and patched_minus_corrupt (means over columns); standardised
    summary:  one row per patch: site, head, restored (pooled over the steps), max_abs_effect (max |f_patched − f_B|)
    clean, corrupt: [T, C] forecasts of A and B; patched: [n, T, C] (standardised); labels: [(site, head)] × n
    all_heads_distance: RMS(f_all − f_A) / RMS(f_B − f_A) with every head patched at once (0 would be A; NaN
              unless patch="heads"); all_heads_reach_clean: max |f_all − f_A| ≤ 1e-5
    """

    split: str
    clean_window: int
    corrupt_window: int
    corrupt_edit: str
    seed: int
    patch: str
    min_gap: float
    table: pd.DataFrame
    summary: pd.DataFrame
    clean: np.ndarray
    corrupt: np.ndarray
    patched: np.ndarray
    labels: tuple[tuple[str, int], ...]
    all_heads_distance: float
    all_heads_reach_clean: bool


def restored_share(clean: np.ndarray, corrupt: np.ndarray, patched: np.ndarray, min_gap: float = 1e-4,
                   pooled: bool = False) -> np.ndarray:
    """clean, corrupt [T, C], patched [..., T, C] → restored [..., T] (module docstring); pooled: [...] over steps."""
    gap = clean - corrupt  # [T, C]
    effect = patched - corrupt  # [..., T, C]
    numerator, denominator = (effect * gap).sum(axis=-1), (gap * gap).sum(axis=-1)  # [..., T], [T]
    valid = np.sqrt(denominator / gap.shape[-1]) >= min_gap  # [T]
    if pooled:
        total = denominator[valid].sum()
        return numerator[..., valid].sum(axis=-1) / total if total > 0 else np.full(numerator.shape[:-1], np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(valid, numerator / np.where(valid, denominator, 1.0), np.nan)


@torch.no_grad()
def patched_forward(model: Informer, batch: Batch, seed: int, patterns: tuple[str, ...] = (),
                    patches: dict[str, torch.Tensor] | None = None, head_mask: HeadMask | None = None):
    """One forward with the key sample drawn from `seed`, inside `patching(patches)` (always: every run takes the same
    observed code path), recording `patterns`. → (forecast, records)."""
    device = next(model.parameters()).device
    generator = key_generator(int(seed))
    with patching(patches or {}):
        if not patterns:
            return model(batch.to(device), head_mask=head_mask, generator=generator), {}
        with recording(*patterns) as rec:
            out = model(batch.to(device), head_mask=head_mask, generator=generator)
    return out, dict(rec.records)


@torch.no_grad()
def patched_heads(model: Informer, corrupt: Batch, contexts: tuple[torch.Tensor, ...], gates: torch.Tensor, *,
                  seed: int = 0, max_rows: int | None = None) -> torch.Tensor:
    """B's forecast under n patch masks: gates [n, n_sites, H] (0 = take the head from `contexts`), contexts one
    [B, L_Q, H, D] per site (A's, per window). → [n·B, pred_len, c_out], variant-major; max_rows variants·windows
    per forward call, each call with a generator freshly seeded with `seed`."""
    device = next(model.parameters()).device
    B = corrupt.x_enc.shape[0]
    per_call = max(1, (max_rows or default_max_rows(model)) // B)
    contexts = tuple(c.to(device) for c in contexts)
    outs = []
    for start in range(0, gates.shape[0], per_call):
        mask = HeadMask(gates[start:start + per_call].to(device), contexts, variants=True)
        outs.append(patched_forward(model, corrupt, seed, head_mask=mask)[0])
    return torch.cat(outs)


def _corrupt_input(prepared, split, clean, corrupt, corrupt_edit):
    corrupt = clean if corrupt is None else int(corrupt)
    edit = parse_edit(corrupt_edit) if isinstance(corrupt_edit, str) else (corrupt_edit or Edit())
    if corrupt == clean and edit.kind == "none":
        raise ConfigError(f"the clean and corrupted inputs are the same window ({clean}) with no edit: "
                          "nothing to restore; choose another window or an edit")
    return corrupt, edit


def activation_patching(model: Informer, prepared: PreparedData, split: str, clean: int, corrupt: int | None = None,
                        *, corrupt_edit: Edit | str | None = None, seed: int = 0, patch: str = "heads",
                        min_gap: float = 1e-4, max_rows: int | None = None) -> PatchResult:
    """Patch clean window `clean` into the corrupted input: window `corrupt` (default: `clean`) with `corrupt_edit`
    applied. patch: "heads" | "embeddings" | "memory" (module docstring).

    Raises ConfigError for an unknown patch point, a bad window or edit, or a corrupted input equal to the clean one;
    ValueError for a model in train mode.
    """
    if model.training:
        raise ValueError("the model is in training mode; analyse a model in eval mode (checkpoints load that way)")
    if patch not in PATCH_POINTS:
        raise ConfigError(f"patch must be one of {', '.join(PATCH_POINTS)}, got {patch!r}")
    corrupt, edit = _corrupt_input(prepared, split, clean, corrupt, corrupt_edit)
    clean_batch = edited_batches(prepared, split, clean, Edit())[0]
    corrupt_batch = edited_batches(prepared, split, corrupt, edit)[1]

    patterns = ("*.context",) if patch == "heads" else EVERYTHING[patch]
    f_clean, records = patched_forward(model, clean_batch, seed, patterns)
    f_corrupt, _ = patched_forward(model, corrupt_batch, seed)
    all_distance, reach = float("nan"), False
    if patch == "heads":
        H = model.config.n_heads
        labels = [(site.name, h) for site in model.sites for h in range(H)]
        gates = model.full_gates(len(labels) + 1)
        for k in range(len(labels)):
            gates[k, k // H, k % H] = 0.0
        gates[-1] = 0.0  # every head at once
        contexts = tuple(records[f"{site.name}.context"] for site in model.sites)
        out = patched_heads(model, corrupt_batch, contexts, gates, seed=seed, max_rows=max_rows)
        labels.append((ALL_HEADS, -1))
    else:
        out = patched_forward(model, corrupt_batch, seed, patches={name: records[name] for name in EVERYTHING[patch]})[0]
        labels = [(patch, -1)]
    f_A, f_B = (f[0].double().cpu().numpy() for f in (f_clean, f_corrupt))
    patched = out.double().cpu().numpy()  # [n, T, C]
    if patch == "heads":
        every = patched[-1]
        all_distance = float(np.sqrt(((every - f_A) ** 2).mean() / max(((f_B - f_A) ** 2).mean(), 1e-300)))
        reach = bool(np.abs(every - f_A).max() <= 1e-5)
    table, summary = _tables(labels, f_A, f_B, patched, min_gap)
    for array in (f_A, f_B, patched):
        array.setflags(write=False)
    return PatchResult(split, int(clean), corrupt, edit.describe(), int(seed), patch, float(min_gap), table, summary,
                       f_A, f_B, patched, tuple(labels), all_distance, reach)


def _tables(labels, f_A: np.ndarray, f_B: np.ndarray, patched: np.ndarray, min_gap: float):
    n, T = patched.shape[:2]
    restored = restored_share(f_A, f_B, patched, min_gap)  # [n, T]
    gap = np.sqrt(((f_A - f_B) ** 2).mean(axis=-1))  # [T]
    sites = np.repeat([site for site, _ in labels], T)
    heads = np.repeat([head for _, head in labels], T)
    table = pd.DataFrame({
        "site": sites, "head": heads, "step": np.tile(np.arange(1, T + 1), n), "restored": restored.reshape(-1),
        "gap": np.tile(gap, n), "clean_minus_corrupt": np.tile((f_A - f_B).mean(axis=-1), n),
        "patched_minus_corrupt": (patched - f_B).mean(axis=-1).reshape(-1)})
    summary = pd.DataFrame({
        "site": [site for site, _ in labels], "head": [head for _, head in labels],
        "restored": restored_share(f_A, f_B, patched, min_gap, pooled=True),
        "max_abs_effect": np.abs(patched - f_B).reshape(n, -1).max(axis=1)})
    return table, summary


__all__ = ["ALL_HEADS", "PATCH_POINTS", "PatchResult", "activation_patching", "patched_forward", "patched_heads",
           "restored_share"]
