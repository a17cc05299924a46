"""The Informer (Zhou et al., AAAI 2021): embeddings → encoder stack → generative decoder → projection."""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import nn

from .attention import AttentionLayer
from .batch import Batch
from .config import SITE_TYPES, InformerConfig
from .decoder import Decoder, DecoderLayer
from .embedding import DataEmbedding
from .distilling import DistillingLayer
from .encoder import Encoder, EncoderLayer, EncoderStack
from .hooks import HookPoint, name_hooks, observed
from .attention import POSITIONAL, option_problems, resolve_kind
from .lags import LagEmbedding, rescale_forecast
from .revin import RevIN
from .row_edits import editing
from .variants import forward_variants


class Site(NamedTuple):
    """One attention layer: kind ("encoder" | "decoder_self" | "cross"), replica (encoder only), layer, index.

    `index` is its row in a head-mask gate tensor; `name` prefixes its hook sites.
    """

    kind: str
    replica: int
    layer: int
    index: int

    @property
    def name(self) -> str:
        return f"encoder.{self.replica}.{self.layer}" if self.kind == "encoder" else f"{self.kind}.{self.layer}"


@dataclass(frozen=True)
class HeadMask:
    """Per-call head gates: 1 keeps a head, 0 removes it from every row of its context.

    gates: [B or 1, n_sites, H] in `model.sites` order (differentiable: captum attributes to it).
    means: None for zero ablation, or one tensor per site (None entries: zero) that a gated head is
           replaced by: context' = g·context + (1 − g)·mean. [L_Q, H, D]: the same for every window (mean
           ablation); [B or 1, L_Q, H, D]: one per window (activation patching: another run's context; with
           variants=True, B is the number of windows and every variant gets the same replacement).
    """

    gates: torch.Tensor
    means: tuple[torch.Tensor | None, ...] | None = None
    # variants=True: gates are [n, n_sites, H], n masks each applied to every window of the batch; the
    # forecast then has n·B rows, variant-major (row k·B + b is window b under mask k). One key sample
    # serves all variants, so comparisons between masks are paired.
    variants: bool = False

    @property
    def n_variants(self) -> int:
        return self.gates.shape[0] if self.variants else 1

    def to(self, device: torch.device) -> "HeadMask":
        """The same mask on `device` (differentiable; itself where nothing moves)."""
        means = None if self.means is None else tuple(None if m is None else m.to(device) for m in self.means)
        return HeadMask(self.gates.to(device), means, self.variants)


def check_attention_override(attention) -> None:
    """A ValueError naming what is wrong with a forward call's `attention` (see model.attention.resolve_kind)."""
    if attention is None:
        return
    specs = {"encoder": attention} if isinstance(attention, str) else attention
    if not isinstance(specs, dict) or not set(specs) <= set(SITE_TYPES):
        raise ValueError(f"attention override must be a kind or a mapping of {', '.join(SITE_TYPES)} to kinds, got "
                         f"{str(attention)[:60]!r}")
    for where, spec in specs.items():
        kind, options = (spec, None) if isinstance(spec, str) or spec is None else tuple(spec)
        if kind is None:
            continue
        problems = option_problems(kind, options)
        if where == "cross" and kind in POSITIONAL:
            problems.append(f"{kind} attention is positional; cross-attention takes full, prob or lsh")
        if problems:
            raise ValueError(f"attention override ({where}): {'; '.join(problems)}")


class Informer(nn.Module):
    """forward(batch, *, head_mask=None, generator=None, attention=None) → forecast [B, pred_len, c_out].

    generator: draws the ProbSparse key samples (None: torch's global RNG, as the official code does).
    attention: a per-call swap of the attention, same weights (model.attention.resolve_kind): "full" runs every site
    with full attention (the counterfactual of a ProbSparse model), "logsparse" the self-attention sites with
    LogSparse, {"encoder": ("window", {"window": 16})} one site type with chosen parameters.
    """

    def __init__(self, config: InformerConfig):
        super().__init__()
        self.config = c = config
        max_len = max(c.seq_len, c.dec_len)
        if c.embedding == "lags":  # Hugging Face's inputs (model/lags.py)
            self.enc_embedding = LagEmbedding(c.enc_in, c.n_marks, c.d_model, c.dropout, c.lags, c.instance_scaling,
                                              0, c.enc_len, c.level_free, c.placeholders)
            self.dec_embedding = LagEmbedding(c.dec_in, c.n_marks, c.d_model, c.dropout, c.lags, c.instance_scaling,
                                              c.enc_len, c.pred_len, c.level_free, c.placeholders)
        else:
            self.enc_embedding = DataEmbedding(c.enc_in, c.n_marks, c.d_model, c.dropout, max_len, c.mark_bias,
                                               c.value_bias)
            self.dec_embedding = DataEmbedding(c.dec_in, c.n_marks, c.d_model, c.dropout, max_len, c.mark_bias,
                                               c.value_bias)

        def attention(kind: str, causal: bool, mix: bool, site_type: str) -> AttentionLayer:
            return AttentionLayer(kind, c.d_model, c.n_heads, causal=causal, mix=mix, factor=c.factor,
                                  dropout=c.dropout, mean_divisor=c.mean_divisor, decoder_lazy=c.decoder_lazy,
                                  sample_block=c.sample_block, causal_sampling=c.causal_sampling,
                                  active_counts=c.active_counts, single_head_union=c.single_head_union,
                                  options=c.site_options(site_type), site_type=site_type)

        mix_all = c.mix and c.mix_sites == "all"  # TSL mixes at every site, Informer2020 in decoder self only
        self.encoder = EncoderStack([
            Encoder([EncoderLayer(attention(c.encoder_attention, False, mix_all, "encoder"), c.d_model, c.d_ff, c.dropout,
                                  c.activation) for _ in range(n_layers)],
                    [DistillingLayer(c.d_model, c.distil_padding) for _ in range(n_layers - 1)] if c.distil else None,
                    c.d_model, c.final_norm)
            for n_layers in c.e_layers])
        self.decoder = Decoder([
            DecoderLayer(attention(c.decoder_attention, True, c.mix, "decoder_self"),
                         attention(c.cross_attention, False, mix_all, "cross"),
                         c.d_model, c.d_ff, c.dropout, c.activation)
            for _ in range(c.d_layers)], c.d_model, c.final_norm)
        self.projection = nn.Linear(c.d_model, c.c_out)
        self.revin = RevIN(c.enc_in) if c.revin else None  # reversible instance normalisation (model/revin.py)
        # Hook sites "enc_embedding" / "dec_embedding": the embedded inputs [B, L, d_model] (recorded or patched).
        self.hook_enc_embedding = HookPoint("enc_embedding")
        self.hook_dec_embedding = HookPoint("dec_embedding")
        self.sites = self._name_sites()
        self.learns_spans = any(hasattr(self.attention_layer(site), "span") for site in self.sites)

    # ---------------------------------------------------------------- naming
    def _name_sites(self) -> tuple[Site, ...]:
        sites: list[Site] = []
        for r, replica in enumerate(self.encoder.replicas):
            name_hooks(replica, f"encoder.{r}")
            for l, layer in enumerate(replica.layers):
                sites.append(Site("encoder", r, l, len(sites)))
                name_hooks(layer, f"encoder.{r}.layer{l}")
            for l, distil in enumerate(replica.distils):
                name_hooks(distil, f"encoder.{r}.distil{l}")
        name_hooks(self.encoder, "encoder")
        for l, layer in enumerate(self.decoder.layers):
            name_hooks(layer, f"decoder.layer{l}")
        for kind in ("decoder_self", "cross"):
            for l in range(len(self.decoder.layers)):
                sites.append(Site(kind, 0, l, len(sites)))
        for site in sites:
            module = self.attention_layer(site)
            module.index = site.index
            name_hooks(module, site.name)
        return tuple(sites)

    def attention_layer(self, site: Site) -> AttentionLayer:
        if site.kind == "encoder":
            return self.encoder.replicas[site.replica].layers[site.layer].attention
        layer = self.decoder.layers[site.layer]
        return layer.self_attention if site.kind == "decoder_self" else layer.cross_attention

    @property
    def n_sites(self) -> int:
        return len(self.sites)

    def full_gates(self, batch_size: int = 1) -> torch.Tensor:
        """All heads on: [batch_size, n_sites, H] ones."""
        p = self.projection.weight
        return torch.ones(batch_size, self.n_sites, self.config.n_heads, device=p.device, dtype=p.dtype)

    # ---------------------------------------------------------------- forward
    def span_penalty(self) -> torch.Tensor | None:
        """Adaptive attention span's ℓ1 term (Sukhbaatar et al. 2019, §3.2): λ/M·Σ_i z_i over the M learned spans
        (each clamped to [0, max_span], as the mask reads it), λ the site's `span_loss`; None without learned spans.
        Training adds it to the forecast loss, so that a span grows only where the loss pays for it."""
        if not self.learns_spans:  # walking every module on each training step cost ~0.5 ms
            return None
        layers = [m for m in self.modules() if isinstance(m, AttentionLayer) and hasattr(m, "span")]
        M = sum(m.span.numel() for m in layers)
        return sum(m.span_loss * m.span.clamp(0, m.max_span).sum() for m in layers) / M

    def check_batch(self, batch: Batch) -> None:
        c, B = self.config, batch.x_enc.shape[0]
        expected = {"x_enc": (B, c.seq_len, c.enc_in), "mark_enc": (B, c.seq_len, c.n_marks),
                    "x_dec": (B, c.dec_len, c.dec_in), "mark_dec": (B, c.dec_len, c.n_marks)}
        for field, shape in expected.items():
            actual = tuple(getattr(batch, field).shape)
            if actual != shape:
                raise ValueError(f"batch.{field} has shape {list(actual)}, expected {list(shape)}")

    def check_head_mask(self, head_mask: HeadMask, B: int) -> None:
        g = head_mask.gates
        H = self.config.n_heads
        rows_ok = head_mask.variants or g.shape[0] in (1, B)
        if g.dim() != 3 or not rows_ok or g.shape[1:] != (self.n_sites, H):
            raise ValueError(f"head_mask.gates has shape {list(g.shape)}, expected [{B} or 1, {self.n_sites}, {H}]")
        if head_mask.means is not None and len(head_mask.means) != self.n_sites:
            raise ValueError(f"head_mask.means has {len(head_mask.means)} entries, expected {self.n_sites}")
        for site, mean in zip(self.sites, head_mask.means or ()):
            if mean is not None and (mean.dim() not in (3, 4) or (mean.dim() == 4 and mean.shape[0] not in (1, B))):
                raise ValueError(f"head_mask.means[{site.index}] ({site.name}) has shape {list(mean.shape)}, "
                                 f"expected [L_Q, H, D] or [{B} or 1, L_Q, H, D]")

    def forward(self, batch: Batch, *, head_mask: HeadMask | None = None, generator: torch.Generator | None = None,
                attention: str | None = None) -> torch.Tensor:
        self.check_batch(batch)
        if head_mask is not None:
            self.check_head_mask(head_mask, batch.x_enc.shape[0])
        check_attention_override(attention)
        # The batch and the mask are read wherever they are (a window_batch is made on the CPU; the model may sit on
        # a GPU): the forecast is on the model's device.
        device = self.projection.weight.device
        batch = batch.to(device)
        head_mask = None if head_mask is None else head_mask.to(device)
        if head_mask is not None and head_mask.variants:  # n masks over every window: [n·B, pred_len, c_out]
            return forward_variants(self, batch, head_mask.gates, head_mask.means, generator=generator,
                                    attention=attention)

        def layer_args(module: AttentionLayer) -> dict:
            gate = mean = None
            if head_mask is not None:
                gate = head_mask.gates[:, module.index]  # [B or 1, H]
                mean = head_mask.means[module.index] if head_mask.means is not None else None
            return {"gate": gate, "mean": mean, "generator": generator, "kind": attention}

        inputs, statistics = self.normalise(batch)
        embedded = self.hook_enc_embedding(self.enc_embedding(inputs.x_enc, inputs.mark_enc))  # [B, L, d_model]
        memory = self.encoder(embedded, layer_args)  # [B, L', d_model]
        x = self.decoder(self.hook_dec_embedding(self.embed_decoder(inputs)), memory, layer_args,
                         self.forecast_rows_only(head_mask, attention))  # [B, L_dec or pred_len, d_model]
        return self.rescale(self.projection(x[:, -self.config.pred_len:]), batch, statistics)  # [B, pred_len, c_out]

    def normalise(self, batch: Batch) -> tuple[Batch, tuple[torch.Tensor, torch.Tensor] | None]:
        """The batch the embeddings read and RevIN's (μ, σ) of each window (config.revin); else (batch, None).
        x_dec: its label_len known rows normalised as x_enc, then pred_len zeros."""
        if self.revin is None:
            return batch, None
        mean, std = self.revin.statistics(batch.x_enc)
        L = self.config.label_len
        x_dec = torch.cat([self.revin.normalise(batch.x_dec[:, :L], mean, std), torch.zeros_like(batch.x_dec[:, L:])],
                          dim=1)
        return Batch(self.revin.normalise(batch.x_enc, mean, std), batch.mark_enc, x_dec, batch.mark_dec), (mean, std)

    def forecast_rows_only(self, head_mask: HeadMask | None, attention) -> int | None:
        """pred_len when the decoder may drop the label rows after its last self-attention (Decoder.forward): the
        last cross-attention is full and mixes no heads with time, and nothing observes or edits the rows (no
        recorder, patch, row edit or head mask, whose hook sites and replacements have every row's shape); else
        None. The variants' forward (model/variants.py) does the same."""
        if head_mask is not None or observed() or editing() or not self.decoder.layers:
            return None
        cross = self.decoder.layers[-1].cross_attention
        kind = resolve_kind(attention, cross.kind, cross.options, "cross")[0]
        return self.config.pred_len if kind == "full" and not cross.mix else None

    def embed_decoder(self, batch: Batch) -> torch.Tensor:
        """The decoder's input [B, L_dec, d_model] (the "lags" embedding also reads the window before it)."""
        if self.config.embedding == "lags":
            return self.dec_embedding(batch.x_dec, batch.mark_dec, batch.x_enc)
        return self.dec_embedding(batch.x_dec, batch.mark_dec)

    def rescale(self, forecast: torch.Tensor, batch: Batch, statistics=None) -> torch.Tensor:
        """Undo the per-window scaling (RevIN's with its `statistics`, or config.instance_scaling; identity by
        default). [n·B, pred_len, c_out]."""
        if statistics is not None:
            return self.revin.denormalise(forecast, *statistics)
        c = self.config
        return rescale_forecast(forecast, batch.x_enc, c.history_len, c.instance_scaling)
