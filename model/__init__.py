"""The Informer, speaking the paper. Public API chosen here."""
from .attention import KeySample, active_count, draw_key_sample, full_attention, gate_heads, lazy_context, \
    probsparse_attention, sampled_dot_products, sparsity_from_samples
from .batch import Batch
from .config import InformerConfig
from .device import autocast_context, key_generator, on_cpu, pick_device
from .encoder import distilled_length
from .hooks import HookPoint, Recorder, patching, recording
from .informer import HeadMask, Informer, Site
from .row_edits import RowEdit, replacing_rows

__all__ = [
    "Batch", "HeadMask", "HookPoint", "Informer", "InformerConfig", "KeySample", "Recorder", "RowEdit", "Site",
    "active_count", "autocast_context", "key_generator", "distilled_length", "draw_key_sample", "full_attention", "gate_heads",
    "lazy_context", "on_cpu", "patching", "pick_device", "probsparse_attention", "recording", "replacing_rows", "sampled_dot_products",
    "sparsity_from_samples",
]
