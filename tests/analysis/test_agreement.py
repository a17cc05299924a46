from analysis.agreement import topu_agreement, strided_windows
from analysis.sparsity import sparsity_report
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
