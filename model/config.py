"""The Informer's settings: one frozen dataclass, in the paper's names."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Literal

from .attention.dispatch import POSITIONAL, SPARSE_KINDS, option_problems

AttentionKind = Literal["prob", "full", "logsparse", "strided", "fixed", "window", "block", "compressed", "lsh",
                        "adaptive"]
MeanDivisor = Literal["U", "L_K"]
DecoderLazy = Literal["cummean", "cumsum"]
MixSites = Literal["decoder_self", "all"]
ActiveCounts = Literal["paper", "hf"]
Embedding = Literal["conv", "lags"]
InstanceScaling = Literal["none", "mean", "std"]
Placeholders = Literal["zero", "last"]

ATTENTION_KINDS = ("prob", "full") + SPARSE_KINDS  # model/attention: the efficient attentions beside ProbSparse
SITE_TYPES = {"encoder": "encoder_attention", "decoder_self": "decoder_attention", "cross": "cross_attention"}


@dataclass(frozen=True)
class InformerConfig:
    """Everything that fixes the Informer's shape and behaviour.

    Defaults are the paper's experiments (seq 96, label 48, pred 24, d_model 512, 8 heads, ...),
    except where a measurement on ETTh1 chose otherwise (see docs/model.md, "Model options").
    """

    enc_in: int  # input features to the encoder
    dec_in: int  # input features to the decoder
    c_out: int  # output features
    seq_len: int = 96  # encoder window L_enc
    label_len: int = 48  # known steps the decoder starts from (generative decoder)
    pred_len: int = 24  # steps forecast in one forward pass
    n_marks: int = 4  # time features per step ("timeF": 4 for hourly data)
    d_model: int = 512
    n_heads: int = 8  # H; per-head width D = d_model / H
    e_layers: tuple[int, ...] = (2,)  # attention layers per encoder replica; (3, 2, 1) is InformerStack
    d_layers: int = 1
    d_ff: int = 2048
    factor: int = 5  # c in u = c·⌈ln L_Q⌉ and U = c·⌈ln L_K⌉
    dropout: float = 0.05
    activation: Literal["gelu", "relu"] = "gelu"
    distil: bool = True  # self-attention distilling between encoder layers
    encoder_attention: AttentionKind = "prob"
    decoder_attention: AttentionKind = "prob"  # causal self-attention in the decoder
    cross_attention: AttentionKind = "full"  # decoder → encoder; the paper keeps this full
    # Parameters of the sites' attention kinds, by site type ("encoder", "decoder_self", "cross"), e.g.
    # {"encoder": {"window": 16, "globals": [0]}} (model/attention/dispatch.py lists each kind's; unset ones take defaults).
    attention_options: dict = field(default_factory=dict)
    # The official code divides the sampled sum by L_K instead of U (Informer2020 issue #582),
    # which shrinks the mean term by U/L_K and ranks queries almost by their max alone.
    mean_divisor: MeanDivisor = "U"
    # Causal self-attention: score each query's M̄ only on the sampled keys it may attend to (j ≤ i, plus
    # its own key). The official code also counts sampled keys in the query's future, which it then masks.
    causal_sampling: bool = True
    # Lazy (unselected) decoder rows: the official code uses the running sum of V, which grows
    # with position; the running mean is the causal analogue of the encoder's mean(V) (issue #633).
    decoder_lazy: DecoderLazy = "cummean"
    # Official decoder self-attention uses mix=True: a transpose + view that interleaves heads and
    # time before the output projection (issues #229, #205). Off by default; on for imported models.
    mix: bool = False
    # Queries that share one key sample (block i // sample_block draws U keys for all its queries).
    # 1 is the official scheme: an independent sample per query, scored by a gather (no faster than SDPA
    # at L=8192). Shared samples are scored as GEMMs (≈30× faster than SDPA there) and, measured on a
    # trained model, agree better with the exact top-u (overlap@u 0.91 vs 0.82), because queries
    # compared on the same keys are paired comparisons. Every query still sees U uniform keys.
    sample_block: int = 512
    mark_bias: bool = True  # the official time-feature Linear has a bias
    # --- Imported models (analysis/checkpoints/imports): each field names one way Time-Series-Library (TSL) or Hugging Face
    # transformers (HF) computes differently; the defaults are Informer2020's (and the paper's) behaviour.
    # Where mix=True mixes: "decoder_self" (Informer2020) or "all" sites (TSL's AttentionLayer reads every inner
    # attention's [B, H, L, D] output as [B, L, H·D], encoder and cross-attention included).
    mix_sites: MixSites = "decoder_self"
    value_bias: bool = True  # the value embedding's Conv1d has a bias (Informer2020); TSL's TokenEmbedding has none
    # Circular padding of the distilling Conv1d(k=3): 1 keeps the length (96 → 48 → 24); TSL's ConvLayer pads 2,
    # so each step gives ⌊(L + 1)/2⌋ + 1 (96 → 49 → 26; Informer2020 issue #130).
    distil_padding: int = 1
    # TSL's `_prob_QK` squeezes [B, 1, L_Q, U] to [B, L_Q, U] when H = 1; its indexing then broadcasts every window's
    # top-u over the batch, so each window gets full rows for the union of the batch's top-u queries (the forecast
    # depends on the other windows of its batch). True reproduces that; no effect with more than one head. (With
    # head-mask variants the union runs over every row of the call, variants included.)
    single_head_union: bool = False
    # u and U: "paper" u = c·⌈ln L_Q⌉, U = c·⌈ln L_K⌉; "hf" u = c·⌈ln(1 + L_Q)⌉, U = c·L_Q·⌈ln(1 + L_K)⌉ (both capped
    # at their length, HF's ProbSparse; give it a sample_block ≥ every L_Q: HF draws one key sample for all queries).
    active_counts: ActiveCounts = "paper"
    # Input embedding: "conv" (value Conv1d + sinusoid + time-feature Linear) or "lags" (HF: a Linear over each
    # step's lagged values, the window's scale features and its time features, plus HF's sinusoid, then a LayerNorm;
    # see model/lags.py). "lags" reads `lags` steps back: the window holds max(lags) steps of history before the
    # encoder's seq_len − max(lags) positions, and the decoder reads the pred_len forecast steps only (x_dec's
    # label_len known rows, a copy of the window's last steps, are not read).
    embedding: Embedding = "conv"
    lags: tuple[int, ...] = ()
    # Per-window scaling inside the model (HF's scaler over the encoder's positions): "mean" divides by mean |x|,
    # "std" standardises; the forecast is mapped back (loc + scale·y). Needs embedding="lags".
    instance_scaling: InstanceScaling = "none"
    # Input channels (indices, never a target) whose level the lags embedding does not read: no log(1 + |loc|)
    # feature, the decoder's placeholders their last value (model/lags.py). For a column with a unit root, whose
    # drifting level a model may take for a predictor (analysis/learning/unit_root.py). Not in HF.
    level_free: tuple[int, ...] = ()
    # The lags embedding's decoder forecast steps, unknown when it runs: "zero" (HF's and the paper's placeholders,
    # 0 before the window is scaled, so −loc/scale after: a level signal that grows without bound as a window's
    # spread shrinks) or "last" (every channel repeats the window's last value; the lab's lags models). "last" read
    # six planted families as well or better (a random-walk input 1.07 → 1.02x the Bayes MSE over ten seeds) and
    # ETTh1/ETTh2's OT at 0.50–0.59x the test MSE of "zero" (docs/measurements.md, benchmarks/placeholders.py).
    placeholders: Placeholders = "zero"
    final_norm: bool = True  # a LayerNorm closes the encoder and the decoder (Informer2020, TSL); HF has none
    # Reversible instance normalisation (Kim et al. 2022; model/revin.py): each window standardised by its own mean
    # and deviation, the forecast mapped back. Off in the paper; the remedy for series whose level trends.
    revin: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "e_layers", tuple(int(n) for n in self.e_layers))
        object.__setattr__(self, "lags", tuple(int(n) for n in self.lags))
        object.__setattr__(self, "level_free", tuple(int(n) for n in self.level_free))
        problems = []
        for name in ("enc_in", "dec_in", "c_out", "seq_len", "pred_len", "n_marks", "d_model",
                     "n_heads", "d_layers", "d_ff", "factor", "sample_block"):
            if int(getattr(self, name)) < 1:
                problems.append(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.label_len < 0 or self.label_len > self.seq_len:
            problems.append(f"label_len must be in [0, seq_len={self.seq_len}], got {self.label_len}")
        if self.d_model % self.n_heads:
            problems.append(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if not self.e_layers or min(self.e_layers) < 1:
            problems.append(f"e_layers needs at least one replica of at least one layer, got {self.e_layers}")
        problems += self._attention_problems()
        if self.mean_divisor not in ("U", "L_K"):
            problems.append(f"mean_divisor must be 'U' or 'L_K', got {self.mean_divisor!r}")
        if self.decoder_lazy not in ("cummean", "cumsum"):
            problems.append(f"decoder_lazy must be 'cummean' or 'cumsum', got {self.decoder_lazy!r}")
        if self.activation not in ("gelu", "relu"):
            problems.append(f"activation must be 'gelu' or 'relu', got {self.activation!r}")
        if not 0.0 <= self.dropout < 1.0:
            problems.append(f"dropout must be in [0, 1), got {self.dropout}")
        if len(self.e_layers) > 1 and self.seq_len // 2 ** (len(self.e_layers) - 1) < 1:
            problems.append(f"seq_len={self.seq_len} is too short for {len(self.e_layers)} encoder replicas")
        problems += self._import_problems()
        if problems:
            raise ValueError("; ".join(problems))

    def _attention_problems(self) -> list[str]:
        """Each site's kind, where it may sit (positional kinds need L_Q = L_K: not cross-attention), its parameters."""
        problems = []
        for site in SITE_TYPES.values():
            if getattr(self, site) not in ATTENTION_KINDS:
                problems.append(f"{site} must be one of {', '.join(ATTENTION_KINDS)}, got {getattr(self, site)!r}")
        if self.cross_attention in POSITIONAL:
            problems.append(f"cross_attention={self.cross_attention!r} is positional (it reads keys by their distance "
                            f"to the query), but cross-attention's queries and keys are different sequences: use "
                            f"full, prob or lsh there")
        options = self.attention_options
        if not isinstance(options, dict) or not set(options) <= set(SITE_TYPES):
            return problems + [f"attention_options must map site types ({', '.join(SITE_TYPES)}) to parameters, got "
                               f"{str(options)[:60]!r}"]
        for site_type, given in options.items():
            kind = getattr(self, SITE_TYPES[site_type])
            problems += [f"attention_options[{site_type!r}]: {p}" for p in option_problems(kind, given)]
        return problems

    def site_options(self, site_type: str) -> dict:
        """The parameters given for one site type's attention kind ({} for none: the kind's defaults)."""
        return dict(self.attention_options.get(site_type) or {})

    def _import_problems(self) -> list[str]:
        """The options of imported models (mix_sites … final_norm) and how they fit together."""
        problems = []
        for name, allowed in (("mix_sites", ("decoder_self", "all")), ("active_counts", ("paper", "hf")),
                              ("embedding", ("conv", "lags")), ("instance_scaling", ("none", "mean", "std")),
                              ("placeholders", ("zero", "last"))):
            if getattr(self, name) not in allowed:
                problems.append(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.distil_padding not in (1, 2):
            problems.append(f"distil_padding must be 1 or 2, got {self.distil_padding}")
        if self.embedding == "lags":
            if not self.lags or min(self.lags) < 0 or max(self.lags) >= self.seq_len:
                problems.append(f"embedding='lags' needs lags in [0, seq_len={self.seq_len}), got {list(self.lags)}")
            if self.dec_in != self.enc_in or self.c_out > self.enc_in:
                problems.append(f"embedding='lags' needs dec_in = enc_in and c_out ≤ enc_in (the targets are the last "
                                f"inputs), got enc_in {self.enc_in}, dec_in {self.dec_in}, c_out {self.c_out}")
            if len(self.e_layers) > 1:
                problems.append("embedding='lags' has one encoder replica")
        elif self.lags:
            problems.append("lags are read only by embedding='lags'")
        inputs_only = int(self.enc_in) - int(self.c_out)
        if self.level_free and (self.embedding != "lags" or list(self.level_free) != sorted(set(self.level_free))
                                 or min(self.level_free) < 0 or max(self.level_free) >= inputs_only):
            problems.append(f"level_free needs embedding='lags' and distinct increasing input-only channels in "
                            f"[0, enc_in − c_out = {inputs_only}), got {list(self.level_free)}")
        if self.instance_scaling != "none" and self.embedding != "lags":
            problems.append("instance_scaling needs embedding='lags'")
        if self.placeholders != "zero" and self.embedding != "lags":
            problems.append("placeholders='last' needs embedding='lags' (the conv embedding reads x_dec as given)")
        if self.revin and self.embedding != "conv":
            problems.append("revin needs embedding='conv' (the lags embedding scales each window itself: "
                            "instance_scaling)")
        if self.revin and (self.dec_in != self.enc_in or self.c_out > self.enc_in):
            problems.append(f"revin needs dec_in = enc_in and c_out ≤ enc_in (the targets are the last inputs), got "
                            f"enc_in {self.enc_in}, dec_in {self.dec_in}, c_out {self.c_out}")
        return problems

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @property
    def history_len(self) -> int:
        """Steps at the start of the window that only feed lags (embedding="lags": max(lags)); else 0."""
        return max(self.lags) if self.embedding == "lags" else 0

    @property
    def enc_len(self) -> int:
        """Positions the encoder reads: seq_len less the lag history."""
        return self.seq_len - self.history_len

    @property
    def dec_len(self) -> int:
        return self.label_len + self.pred_len

    def replace(self, **changes) -> "InformerConfig":
        return InformerConfig(**{**asdict(self), **changes})

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    def __hash__(self) -> int:  # attention_options is a dict: hash the JSON form (configs key caches)
        return hash(self.to_json())

    @classmethod
    def from_dict(cls, data: dict) -> "InformerConfig":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown config fields: {', '.join(unknown)}")
        return cls(**data)
