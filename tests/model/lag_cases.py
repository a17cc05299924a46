"""A tiny lags-embedding model and its inputs, shared by the tests of the lags embedding's options (level_free,
placeholders): 3 channels, a 24-step window of drifting values, lags (0, 6), label 8, pred 6."""
import torch

from informer_lab.model import Batch, Informer, InformerConfig

C, L, LABEL, PRED, MARKS, LAGS = 3, 24, 8, 6, 2, (0, 6)


def config(**changes) -> InformerConfig:
    """One target (c_out 1) unless `changes` say otherwise."""
    return InformerConfig(**{**dict(enc_in=C, dec_in=C, c_out=1, seq_len=L, label_len=LABEL, pred_len=PRED,
                                    n_marks=MARKS, d_model=8, n_heads=2, d_ff=8, dropout=0.0, embedding="lags",
                                    lags=LAGS, instance_scaling="std"), **changes})


def inputs(seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(2, L, C, generator=g).cumsum(1) + 3.0, torch.randn(2, L, MARKS, generator=g),
            torch.randn(2, LABEL + PRED, C, generator=g), torch.randn(2, LABEL + PRED, MARKS, generator=g))


def forecast(model: Informer, x_enc, m_enc, x_dec, m_dec) -> torch.Tensor:
    return model(Batch(x_enc, m_enc, x_dec, m_dec), generator=torch.Generator().manual_seed(0))
