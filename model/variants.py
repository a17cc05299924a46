"""Many head masks over the same windows in one forward pass, sharing every row the masks agree on.

n mask variants are evaluated on B windows. Rows are kept in *groups*: an activation of G·B rows holds
window b of group g at row g·B + b, and `group_of[k]` names the group that variant k reads. All variants
start in one group; at each attention site, once the per-head context is computed (once per group), the
groups split wherever the variants' gates at that site differ. So a sweep of single-head masks pays for
the layers before a head's site once, not once per mask — and the result equals a one-mask-at-a-time
loop, because the key samples are drawn per layer call, shared by all rows.
"""
from __future__ import annotations

import torch

from .attention import AttentionLayer, resolve_kind


class VariantRows:
    """The bookkeeping of one forward pass with n gate variants over B windows."""

    def __init__(self, gates: torch.Tensor, means, B: int):
        self.gates = gates  # [n, n_sites, H]
        self.means = means
        self.B = B
        self.n = gates.shape[0]

    def start(self) -> torch.Tensor:
        """Every variant in group 0."""
        return torch.zeros(self.n, dtype=torch.long, device=self.gates.device)

    def take(self, x: torch.Tensor, parent: torch.Tensor | None) -> torch.Tensor:
        """[G·B, ...] → [G'·B, ...]: new group g' copies old group parent[g']. None: unchanged."""
        if parent is None:
            return x
        G = x.shape[0] // self.B
        return x.view(G, self.B, *x.shape[1:])[parent].reshape(len(parent) * self.B, *x.shape[1:])

    @staticmethod
    def regroup(keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Variants with equal key rows share a group. keys: [n, k] → (group_of [n], representative [G'])."""
        unique, group_of = torch.unique(keys, dim=0, return_inverse=True)
        first = torch.full((len(unique),), keys.shape[0], dtype=torch.long, device=keys.device)
        first = first.scatter_reduce(0, group_of, torch.arange(keys.shape[0], device=keys.device), "amin")
        return group_of, first

    def join(self, a: torch.Tensor, b: torch.Tensor):
        """The common refinement of two groupings: (group_of, parent_in_a, parent_in_b), parents None if unchanged."""
        if torch.equal(a, b):
            return a, None, None
        group_of, first = self.regroup(torch.stack([a, b], dim=1))
        return group_of, a[first], b[first]

    def attend(self, module: AttentionLayer, x_q: torch.Tensor, g_q: torch.Tensor, x_kv: torch.Tensor,
               g_kv: torch.Tensor, **attend_args):
        """Attention at one site. Returns (output rows, their grouping, parent map for the query stream)."""
        groups, parent_q, parent_kv = self.join(g_q, g_kv)
        x_q_joined = self.take(x_q, parent_q)
        x_kv_joined = x_q_joined if x_kv is x_q else self.take(x_kv, parent_kv)
        context = module.attend(x_q_joined, x_kv_joined, **attend_args)  # [G·B, L_Q, H, D], once per group

        site_gates = self.gates[:, module.index]  # [n, H]
        split_of, first = self.regroup(torch.cat([groups.unsqueeze(1).to(site_gates.dtype), site_gates], dim=1))
        parent = groups[first]  # new group → group of the joined grouping
        if len(first) == int(groups.max()) + 1:  # the gates split no group: keep the rows as they are
            split_of, parent = groups, None
        context = self.take(context, parent)
        gate = site_gates[first].repeat_interleave(self.B, dim=0)  # [G'·B, H]
        mean = self.means[module.index] if self.means is not None else None
        out = module.project(context, gate, None if mean is None else self.fit_mean(mean, context))

        if parent is None:
            return out, split_of, parent_q
        return out, split_of, parent if parent_q is None else parent_q[parent]

    def fit_mean(self, mean: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """A site's replacement for the rows at hand. [L_Q, H, D] (shared) or [B or 1, L_Q, H, D] (per window,
        the same for every variant: repeated over the G groups of `context` [G·B, L_Q', H, D]); the query rows
        are cut to the last L_Q' when the forward trimmed them to the forecast."""
        L_Q = context.shape[1]
        if mean.dim() == 3:
            return mean[-L_Q:] if mean.shape[0] > L_Q else mean
        mean = mean[:, -L_Q:] if mean.shape[1] > L_Q else mean
        if mean.shape[0] == self.B and context.shape[0] != self.B:
            mean = mean.repeat(context.shape[0] // self.B, 1, 1, 1)  # row g·B + b is window b
        return mean

    def finish(self, out: torch.Tensor, groups: torch.Tensor) -> torch.Tensor:
        """[G·B, ...] in groups → [n·B, ...] variant-major (row k·B + b)."""
        return self.take(out, groups)


def forward_variants(model, batch, gates: torch.Tensor, means, *, generator, attention) -> torch.Tensor:
    """The Informer forward for n gate variants; mirrors Informer.forward step by step."""
    rows = VariantRows(gates, means, batch.x_enc.shape[0])
    args = {"generator": generator, "kind": attention}

    inputs, statistics = model.normalise(batch)
    embedded = model.hook_enc_embedding(model.enc_embedding(inputs.x_enc, inputs.mark_enc))
    outputs = []
    for r, replica in enumerate(model.encoder.replicas):
        x, g = model.encoder.replica_input(embedded, r), rows.start()
        for i, layer in enumerate(replica.layers):
            attended, g, parent = rows.attend(layer.attention, x, g, x, g, **args)
            x = layer.feed_forward(layer.add_attention(rows.take(x, parent), attended))
            if i < len(replica.distils):
                x = replica.distils[i](x)
        outputs.append((replica.finish(x), g))

    memory, g_mem = outputs[0]
    for x, g in outputs[1:]:  # bring every replica onto one grouping, then join along time
        g_mem, parent_mem, parent_x = rows.join(g_mem, g)
        memory = torch.cat([rows.take(memory, parent_mem), rows.take(x, parent_x)], dim=1)
    memory = model.encoder.hook_out(memory)

    y, g = model.hook_dec_embedding(model.embed_decoder(inputs)), rows.start()
    last = len(model.decoder.layers) - 1
    for i, layer in enumerate(model.decoder.layers):
        attended, g, parent = rows.attend(layer.self_attention, y, g, y, g, **args)
        y = layer.add_self_attention(rows.take(y, parent), attended)
        if i == last and resolve_kind(attention, layer.cross_attention.kind, {}, "cross")[0] == "full" and not layer.cross_attention.mix:
            # Only the pred_len forecast rows reach the output. With full cross-attention each query row is
            # independent and what follows is position-wise, so the label rows can be dropped: same forecast
            # (not when the cross-attention mixes heads and time, TSL's mix_sites="all": its rows depend on others).
            y = y[:, -model.config.pred_len:]
        attended, g, parent = rows.attend(layer.cross_attention, y, g, memory, g_mem, **args)
        y = layer.feed_forward(layer.add_cross_attention(rows.take(y, parent), attended))
    out = model.projection(model.decoder.norm(y))[:, -model.config.pred_len:]
    return model.rescale(rows.finish(out, g), batch, statistics)
