"""The model's input: one frozen bundle of the four tensors the Informer reads."""
from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Batch:
    """Encoder window and generative-decoder input, already scaled.

    x_enc:    [B, seq_len, enc_in]                  the known history
    mark_enc: [B, seq_len, n_marks]                 its time features
    x_dec:    [B, label_len + pred_len, dec_in]     last label_len known steps, then pred_len zeros
    mark_dec: [B, label_len + pred_len, n_marks]    the true timestamps' features, future included
    """

    x_enc: torch.Tensor
    mark_enc: torch.Tensor
    x_dec: torch.Tensor
    mark_dec: torch.Tensor

    def to(self, device: torch.device | str) -> "Batch":
        return Batch(*(t.to(device) for t in (self.x_enc, self.mark_enc, self.x_dec, self.mark_dec)))

    @property
    def size(self) -> int:
        return self.x_enc.shape[0]

    def repeat(self, n: int) -> "Batch":
        """Each element n times in a row (element b lands at rows b*n .. b*n+n-1)."""
        return Batch(*(t.repeat_interleave(n, dim=0) for t in (self.x_enc, self.mark_enc, self.x_dec, self.mark_dec)))

    def slice(self, start: int, stop: int) -> "Batch":
        return Batch(*(t[start:stop] for t in (self.x_enc, self.mark_enc, self.x_dec, self.mark_dec)))
