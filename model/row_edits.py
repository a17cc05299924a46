"""Per-call replacement of heads' attention rows: the two baselines of attention as explanation.

- uniform rows (Wiegreffe & Pinter 2019): every computed row of the head weighs the keys its query may see
  equally (causal: its prefix, keys j ≤ i; otherwise every key; under a sparse kind, the keys its pattern lets the
  query read: LogSparse's, a window's, LSH's buckets … — compressed attention's summaries are not keys and keep no
  weight);
- permuted rows (Jain & Wallace 2019): each computed row's weights are shuffled among those same keys (one
  permutation per row, drawn from the edit's generator).

The head's context on those rows becomes new_rows @ V, before the head gate and the output projection. Only rows
the layer computes are replaced: a ProbSparse head's lazy rows already are mean(V) (uniform) in the encoder, and
a running mean or sum of V in the causal decoder; they stay as they are. Like recording and patching
(`model.hooks`), an edit lives in a `contextvars` scope around the call, so a model shared by every session is
never changed:

    with replacing_rows({"encoder.0.1": RowEdit(heads=(2,), mode="uniform")}):
        forecast = model(batch, generator=g)

Inside the scope, the site's "rows" hook records the rows the head used (the replaced ones).
"""
from __future__ import annotations

import contextvars
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Mapping

import torch

MODES = ("uniform", "permute")
_EDITS: contextvars.ContextVar["dict[str, RowEdit] | None"] = contextvars.ContextVar("informer_row_edits",
                                                                                    default=None)


@dataclass(frozen=True)
class RowEdit:
    """Which heads of one site get which rows. `generator` draws the permutations (mode "permute"; required, so
    that every draw is repeatable)."""

    heads: tuple[int, ...]
    mode: str = "uniform"
    generator: torch.Generator | None = None

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"row edit mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.mode == "permute" and self.generator is None:
            raise ValueError("a permuting row edit needs a torch.Generator (every draw takes a seed)")
        if not self.heads:
            raise ValueError("a row edit names at least one head")


@contextmanager
def replacing_rows(edits: Mapping[str, RowEdit]) -> Iterator[None]:
    """Inside the block, the sites named (e.g. "encoder.0.1", "decoder_self.0", "cross.0") use the edited rows."""
    token = _EDITS.set(dict(edits))
    try:
        yield
    finally:
        _EDITS.reset(token)


def editing() -> bool:
    """Some row edit is active in this context."""
    return _EDITS.get() is not None


def row_edit(site: str) -> RowEdit | None:
    """The edit of `site` in the current context, or None."""
    edits = _EDITS.get()
    return None if edits is None else edits.get(site)


def allowed_keys(query_positions: torch.Tensor, L_K: int, causal: bool) -> torch.Tensor:
    """[..., u, L_K] True where the query at each position may attend (causal: keys j ≤ i)."""
    keys = torch.arange(L_K, device=query_positions.device)
    if not causal:
        return torch.ones(*query_positions.shape, L_K, dtype=torch.bool, device=query_positions.device)
    return keys <= query_positions.unsqueeze(-1)


def uniform_rows(allowed: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Rows weighing every allowed key equally. allowed: [..., u, L_K] → same shape."""
    weights = allowed.to(dtype)
    return weights / weights.sum(dim=-1, keepdim=True).clamp(min=1)


def permuted_rows(rows: torch.Tensor, allowed: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Each row's weights shuffled among its allowed keys (an independent permutation per row; the weights of
    keys a row may not see stay 0). rows, allowed: [..., u, L_K]; the allowed keys need not be a prefix (a sparse
    kind's pattern)."""
    L_K = rows.shape[-1]
    keys = torch.arange(L_K, device=rows.device)
    noise = torch.rand(rows.shape, generator=generator, device=generator.device).to(rows.device)
    source = noise.masked_fill(~allowed, 2.0).argsort(dim=-1)  # the allowed keys first, in random order …
    target = torch.where(allowed, keys, keys + L_K).argsort(dim=-1)  # … land on the allowed keys in key order
    moved = torch.zeros_like(rows).scatter_(-1, target, torch.gather(rows, -1, source))
    return moved.masked_fill_(~allowed, 0)


def apply_row_edit(edit: RowEdit, rows: torch.Tensor, selected: torch.Tensor | None, V: torch.Tensor,
                   context: torch.Tensor, causal: bool,
                   pattern: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(rows, context) with the edit's heads replaced.

    rows: [B, H, u, L_K] softmax rows; selected: [B, H, u] their queries (None: every query, in order);
    V: [B, H, L_K, D]; context: [B, H, L_Q, D] after the lazy fill; pattern: bool [L_Q, L_K], [H, L_Q, L_K] or
    [B, H, L_Q, L_K], the keys each query may read (a sparse kind's; None: every key, or the prefix when causal).
    Returns new tensors (inputs untouched).
    """
    B, H, u, L_K = rows.shape
    bad = [h for h in edit.heads if not 0 <= h < H]
    if bad:
        raise ValueError(f"row edit names head {bad[0]}, but the site has heads 0 … {H - 1}")
    heads = torch.as_tensor(sorted(set(edit.heads)), device=rows.device)
    if selected is None:
        selected = torch.arange(u, device=rows.device).expand(B, H, u)
    positions = selected[:, heads]  # [B, h, u]
    if pattern is None:
        allowed = allowed_keys(positions, L_K, causal)  # [B, h, u, L_K]
    else:
        every = pattern.expand(B, H, *pattern.shape[-2:])[:, heads]  # [B, h, L_Q, L_K]
        allowed = torch.gather(every, 2, positions.unsqueeze(-1).expand(-1, -1, -1, L_K))
    if edit.mode == "uniform":
        new = uniform_rows(allowed, rows.dtype)
    else:
        new = permuted_rows(rows[:, heads], allowed, edit.generator)
    rows = rows.clone()
    rows[:, heads] = new
    new_context = new.to(V.dtype) @ V[:, heads]  # [B, h, u, D]
    context = context.clone()
    part = context[:, heads]  # [B, h, L_Q, D] (a copy)
    part.scatter_(2, positions.unsqueeze(-1).expand(-1, -1, -1, V.shape[-1]), new_context.to(context.dtype))
    context[:, heads] = part
    return rows, context


__all__ = ["MODES", "RowEdit", "allowed_keys", "apply_row_edit", "permuted_rows", "replacing_rows", "row_edit",
           "uniform_rows"]
