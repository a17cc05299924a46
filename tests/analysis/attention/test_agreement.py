"""Top-u agreement over many windows: the sparsity report's overlap averaged over the same windows, with an
interval, and scored on the top-u each layer selects."""
from informer_lab.analysis.attention.agreement import strided_windows, topu_agreement
from informer_lab.analysis.attention.sparsity import sparsity_report


def test_topu_agreement_is_the_sparsity_reports_overlap_averaged_over_the_same_windows(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    table = topu_agreement(model, tiny_prepared, "val", max_windows=6, seed=2, batch_size=4)
    windows, _ = strided_windows(tiny_prepared, "val", 6)
    report = sparsity_report(model, tiny_prepared, "val", list(windows), seed=2, seeds=1)
    by = report.agreement_by_seed.groupby(["site", "head"])["overlap_at_u"].mean()
    for row in table.itertuples():
        assert abs(row.overlap_at_u - by[(row.site, row.head)]) < 1e-12
        assert row.overlap_at_u_lo <= row.overlap_at_u <= row.overlap_at_u_hi
    assert set(table["site"]) == {"encoder.0.0", "encoder.0.1", "decoder_self.0"}


def test_u_is_what_the_layer_selects_also_with_hugging_faces_counts(sample_frame):
    """A model with HF's sample counts (u = c·⌈ln(1 + L_Q)⌉) is scored on its own top-u, not the paper's: at L_Q = 20
    they differ (2·⌈ln 21⌉ = 8, 2·⌈ln 20⌉ = 6)."""
    import torch

    from informer_lab.analysis.data import DataSpec, prepare
    from informer_lab.analysis.attention.recording import record_forward, window_batch
    from informer_lab.analysis.learning.training import config_for
    from informer_lab.model import Informer
    prepared = prepare(sample_frame, DataSpec(target="load", seq_len=20, label_len=10, pred_len=6))
    torch.manual_seed(0)
    config = config_for(prepared, d_model=8, n_heads=2, e_layers=(1,), d_ff=8, dropout=0.0, factor=2)
    model = Informer(config.replace(active_counts="hf", sample_block=10_000)).eval()
    table = topu_agreement(model, prepared, "val", max_windows=4, seed=0)
    records = record_forward(model, window_batch(prepared, "val", [0]), 0, "*.selected")
    for row in table.drop_duplicates("site").itertuples():
        assert row.u == records[f"{row.site}.selected"].shape[-1]
    encoder = table[table["site"] == "encoder.0.0"].iloc[0]
    assert (encoder["L_Q"], encoder["u"]) == (20, 8)
