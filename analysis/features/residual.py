"""One recorded forward pass rebuilt layer by layer: every LayerNorm's σ at every row and every head's write, and the
linear paths along the residual stream that a feature's direction takes with those σ frozen (DESIGN §7, §9).

The pass records each head's context, each layer's output, the embeddings and the cross-attention rows; each post-norm
layer is then recomputed from them with the model's own modules (eval mode: every dropout is the identity),

    encoder layer:  z1 = x + attn(x),  x1 = norm1(z1),  z2 = x1 + FFN(x1),  out = norm2(z2)
    decoder layer:  z1 = x + self(x),  x1 = norm1(z1),  z2 = x1 + cross(x1, memory),  x2 = norm2(z2),
                    z3 = x2 + FFN(x2), out = norm3(z3)

keeping σ = √(var(z) + eps) of every norm's input per row. A LayerNorm with σ frozen is linear: w ↦ γ ⊙ C w / σ (C
removes the mean, no β). Along the residual stream a row stays a row, so a chain of frozen norms is one matrix
G = Π diag(γ)C (the same at every row) times a scalar Π 1/σ per (window, row): cheap for every feature at once.

The stream in events ("heads" a site writes, "norm", "site" a hook site, "memory", "forecast"), one segment per run of
positions: each encoder replica from its input (or a distilling step's output: distilling has no residual path) to its
closing norm and `encoder.{r}.out`; the decoder from its embedding to its closing norm and the forecast. The memory
reaches the decoder only through each cross-attention's values: with the rows as computed (frozen), head h carries
memory row j into forecast row t as A[t, j]·W_O,h W_V,h (its biases, as every bias and β, go to the remainder).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from informer_lab.model import Batch, Informer, on_cpu

from informer_lab.analysis.anatomy.direct import head_writes, rescale_factor
from informer_lab.analysis.anatomy.lens import check_eval
from informer_lab.analysis.instruments.patching import patched_forward

PATTERNS = ("*.context", "*layer*.out", "*distil*.out", "encoder*.out", "enc_embedding", "dec_embedding",
            "cross.*.rows")


@dataclass(frozen=True, eq=False)
class ResidualPass:
    """One batch of B windows rebuilt (module docstring). P = pred_len, C = c_out, d = d_model.

    records:  the recorded hook sites (site name → tensor)
    norms:    norm name → (module, σ [B, L] float64, None for an Identity): "encoder.{r}.layer{l}.norm{1,2}",
              "encoder.{r}.final", "decoder.layer{l}.norm{1,2,3}", "decoder.final"
    writes:   head site name → [H, B, L_Q, d] float64, each head's write at every row (out_projection, no bias)
    segments: the stream's events, one tuple of (kind, name) per segment
    forecast: [B, P, C] model units; factor: [B, 1, C] the per-window rescale's linear factor
    """

    records: dict
    norms: dict
    writes: dict
    segments: tuple
    forecast: torch.Tensor
    factor: torch.Tensor


def _sigma(z: torch.Tensor, norm: nn.Module) -> torch.Tensor | None:
    if not isinstance(norm, nn.LayerNorm):
        return None
    return torch.sqrt(z.double().var(dim=-1, unbiased=False) + norm.eps)  # [B, L]


@torch.no_grad()
def residual_pass(model: Informer, batch: Batch, seed: int) -> ResidualPass:
    """Record one forward pass (key sample from `seed`, as every other pass of the features) and rebuild it."""
    check_eval(model)
    forecast, rec = patched_forward(model, batch, seed, PATTERNS)
    rec = {k: v.cpu() for k, v in rec.items()}
    model = on_cpu(model)  # the rebuild reads the recorded pass with the model's own layers, on the CPU
    norms, writes, segments = {}, {}, []

    def attend(att, name: str, x: torch.Tensor) -> torch.Tensor:
        context = rec[f"{name}.context"]  # [B, L_Q, H, D]
        writes[name] = head_writes(att, context, context.shape[1]).double()
        return att.project(context)

    for r, replica in enumerate(model.encoder.replicas):
        L_r = rec["enc_embedding"].shape[1] // 2 ** r
        x = rec["enc_embedding"][:, -L_r:]
        events = [("site", "enc_embedding")]
        for l, layer in enumerate(replica.layers):
            name = model.sites[layer.attention.index].name
            z1 = x + attend(layer.attention, name, x)
            norms[f"encoder.{r}.layer{l}.norm1"] = (layer.norm1, _sigma(z1, layer.norm1))
            z2 = layer.ffn.residual(layer.norm1(z1))
            norms[f"encoder.{r}.layer{l}.norm2"] = (layer.norm2, _sigma(z2, layer.norm2))
            x = rec[f"encoder.{r}.layer{l}.out"]
            events += [("heads", name), ("norm", f"encoder.{r}.layer{l}.norm1"),
                       ("norm", f"encoder.{r}.layer{l}.norm2"), ("site", f"encoder.{r}.layer{l}.out")]
            if l < len(replica.distils):
                segments.append(tuple(events))
                x = rec[f"encoder.{r}.distil{l}.out"]
                events = [("site", f"encoder.{r}.distil{l}.out")]
        norms[f"encoder.{r}.final"] = (replica.norm, _sigma(x, replica.norm))
        events += [("norm", f"encoder.{r}.final"), ("site", f"encoder.{r}.out"), ("memory", f"encoder.{r}")]
        segments.append(tuple(events))

    x = rec["dec_embedding"]
    events = [("site", "dec_embedding")]
    for l, layer in enumerate(model.decoder.layers):
        self_name, cross_name = (model.sites[a.index].name for a in (layer.self_attention, layer.cross_attention))
        z1 = x + attend(layer.self_attention, self_name, x)
        norms[f"decoder.layer{l}.norm1"] = (layer.norm1, _sigma(z1, layer.norm1))
        x1 = layer.norm1(z1)
        z2 = x1 + attend(layer.cross_attention, cross_name, x1)
        norms[f"decoder.layer{l}.norm2"] = (layer.norm2, _sigma(z2, layer.norm2))
        z3 = layer.ffn.residual(layer.norm2(z2))
        norms[f"decoder.layer{l}.norm3"] = (layer.norm3, _sigma(z3, layer.norm3))
        x = rec[f"decoder.layer{l}.out"]
        events += [("heads", self_name), ("norm", f"decoder.layer{l}.norm1"), ("heads", cross_name),
                   ("norm", f"decoder.layer{l}.norm2"), ("norm", f"decoder.layer{l}.norm3"),
                   ("site", f"decoder.layer{l}.out")]
    norms["decoder.final"] = (model.decoder.norm, _sigma(x, model.decoder.norm))
    events += [("norm", "decoder.final"), ("forecast", "forecast")]
    segments.append(tuple(events))
    batch = batch.to(next(model.parameters()).device)
    factor = rescale_factor(model, batch, model.normalise(batch)[1])  # RevIN's σ, HF's scale, or 1
    return ResidualPass(rec, norms, writes, tuple(segments), forecast.cpu(), factor.cpu())


@dataclass(frozen=True)
class Chain:
    """Frozen norms in a row: v [B, L, d] ↦ scale[..., None] · (v @ matrixᵀ); matrix [d, d], scale [B, L] (float64)."""

    matrix: torch.Tensor
    scale: torch.Tensor

    def apply(self, v: torch.Tensor) -> torch.Tensor:
        return (v.double() @ self.matrix.T) * self.scale[..., None]


def chain(rp: ResidualPass, names, d: int, shape: tuple[int, int], rows: slice = slice(None)) -> Chain:
    """The frozen norms `names` in order, at `rows` of each (σ [B, L] sliced to them); shape (B, L) after slicing."""
    matrix = torch.eye(d, dtype=torch.float64)
    scale = torch.ones(shape, dtype=torch.float64)
    centre = torch.eye(d, dtype=torch.float64) - 1.0 / d
    for name in names:
        norm, sigma = rp.norms[name]
        if sigma is None:
            continue
        gamma = norm.weight.detach().double().cpu() if norm.weight is not None else torch.ones(d, dtype=torch.float64)
        matrix = (gamma[:, None] * centre) @ matrix
        scale = scale / sigma[:, rows]
    return Chain(matrix, scale)


def locate(rp: ResidualPass, kind: str, name: str) -> tuple[int, int]:
    """(segment, index) of an event."""
    for s, events in enumerate(rp.segments):
        if (kind, name) in events:
            return s, events.index((kind, name))
    raise KeyError(f"{kind} {name!r} is not on the residual stream of this model")


def norms_between(rp: ResidualPass, segment: int, start: int, stop: int | None = None) -> list[str]:
    events = rp.segments[segment]
    return [name for kind, name in events[start:stop] if kind == "norm"]


__all__ = ["Chain", "PATTERNS", "ResidualPass", "chain", "locate", "norms_between", "residual_pass"]
