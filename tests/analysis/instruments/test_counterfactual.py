"""Counterfactual windows: the edit syntax, what each edit does in original units, and what an edit can reach."""
import numpy as np
import pytest
import torch

from informer_lab.analysis.instruments.counterfactual import counterfactual
from informer_lab.analysis.data import DataSpec, prepare
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.heads.masking import masked_window_forecast
from informer_lab.analysis.instruments.window_edits import Edit, apply_edit, edited_batches, parse_edit, window_frame
from informer_lab.model import HeadMask

SEQ, LABEL = 48, 24  # tests/conftest.py TINY_SPEC
WINDOW = 30


def test_parse_edit_reads_every_preset():
    assert parse_edit("none").kind == "none"
    e = parse_edit("spike:t=40,size=3")
    assert (e.kind, e.t, e.size, e.column, e.units) == ("spike", 40, 3.0, None, None)
    e = parse_edit(" Shift: t=60 , size=-1, units=ABS ")
    assert (e.kind, e.t, e.size, e.units) == ("shift", 60, -1.0, "abs")
    assert parse_edit("scale:factor=1.5").factor == 1.5
    assert parse_edit("trend:slope=0.1").slope == 0.1
    assert parse_edit("zero:column=temperature").column == "temperature"
    e = parse_edit("shuffle:column=price,seed=4")
    assert (e.column, e.seed) == ("price", 4)
    e = parse_edit("paste:window=7,t=10,length=20")
    assert (e.window, e.t, e.length) == (7, 10, 20)
    assert parse_edit("spike:t=40,size=3").describe() == "spike:t=40,size=3"


@pytest.mark.parametrize("text,message", [
    ("spik:t=1,size=2", r"unknown edit 'spik'; choose none, spike"),
    ("spike:t=4x0,size=1", r"t must be a whole number, got '4x0'"),
    ("spike:t=40", r"spike needs size"),
    ("spike:t=1,siz=2", r"spike takes t, size, column, units, not 'siz'"),
    ("spike:t40,size=1", r"'t40' is not key=value"),
    ("spike:t=1,t=2,size=1", r"t is given twice"),
    ("scale:factor=nan", r"factor must be a finite number, got 'nan'"),
    ("spike:t=1,size=1,units=kg", r"units must be std or abs, got 'kg'"),
    ("none:t=1", r"none takes no parameters, not 't'"),
])
def test_bad_edit_text_names_the_bad_part(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_edit(text)


def test_each_preset_changes_what_it_says_in_original_units(tiny_prepared):
    p = tiny_prepared
    target = p.columns.index("load")
    std, mean = p.scaler.std, p.scaler.mean

    def edit(text):
        return apply_edit(p, "test", WINDOW, parse_edit(text))

    e = edit("spike:t=40,size=3")
    diff = e.edited - e.original
    assert np.isclose(diff[40, target], 3 * std[target]) and np.count_nonzero(diff) == 1
    assert np.isclose((edit("spike:t=40,size=3,units=abs").edited - e.original)[40, target], 3.0)
    diff = edit("shift:t=10,size=-1,column=price").edited - e.original
    price = p.columns.index("price")
    assert np.allclose(diff[10:, price], -std[price]) and not diff[:10].any() and not np.delete(diff, price, 1).any()
    x, y = e.original[5:, target], edit("scale:factor=1.5,t=5").edited[5:, target]
    assert np.isclose(y.mean(), x.mean()) and np.allclose(y - y.mean(), 1.5 * (x - x.mean()))
    assert np.allclose(edit("scale:factor=2,around=zero").edited[:, target], 2 * e.original[:, target])
    diff = edit("trend:slope=0.5,t=8").edited - e.original
    assert np.allclose(diff[8:, target], 0.5 * std[target] * np.arange(SEQ - 8)) and not diff[:8].any()
    z = edit("zero:column=temperature")
    t_col = p.columns.index("temperature")
    assert np.allclose(z.edited[:, t_col], mean[t_col]) and np.allclose(z.x_enc_edited[:, t_col], 0, atol=1e-6)
    s1, s2 = edit("shuffle:column=humidity,seed=3"), edit("shuffle:column=humidity,seed=3")
    h = p.columns.index("humidity")
    assert np.array_equal(s1.edited, s2.edited) and not np.array_equal(s1.edited[:, h], e.original[:, h])
    assert np.array_equal(np.sort(s1.edited[:, h]), np.sort(e.original[:, h]))
    pasted = edit("paste:window=500,t=10,length=5")
    source = apply_edit(p, "test", 500, Edit()).original
    assert np.array_equal(pasted.edited[10:15], source[10:15]) and np.array_equal(pasted.edited[:10], e.original[:10])
    assert pasted.changed[10:15].any() and not pasted.changed[:10].any() and not pasted.changed[15:].any()


@pytest.mark.parametrize("text,message", [
    ("spike:t=48,size=1", r"t=48 is outside the encoder window's steps 0 … 47"),
    ("zero:column=nope", r"column 'nope' is not an input column of this model \(inputs: temperature"),
    ("paste:window=3,t=40,length=10", r"t \+ length must stay within the window's 48 steps"),
    ("paste:window=99999,t=0,length=1", r"window 99999 is outside"),
])
def test_edits_that_do_not_fit_the_window_are_named(tiny_prepared, text, message):
    with pytest.raises(ConfigError, match=message):
        apply_edit(tiny_prepared, "test", WINDOW, parse_edit(text))


def test_a_covariate_of_a_univariate_model_is_refused(sample_frame):
    univariate = prepare(sample_frame, DataSpec(target="load", features="S", seq_len=SEQ, label_len=LABEL, pred_len=12))
    with pytest.raises(ConfigError, match=r"column 'temperature' is not an input column.*inputs: load\)"):
        apply_edit(univariate, "test", 0, parse_edit("zero:column=temperature"))


def test_hand_edited_table(tiny_prepared):
    frame = window_frame(tiny_prepared, "test", WINDOW)
    assert list(frame.columns) == ["timestamp", *tiny_prepared.columns] and len(frame) == SEQ
    same = apply_edit(tiny_prepared, "test", WINDOW, Edit("table", table=frame))
    assert torch.equal(same.x_enc_edited, same.x_enc) and not same.changed.any()
    frame.loc[3, "price"] += 10.0
    moved = apply_edit(tiny_prepared, "test", WINDOW, Edit("table", table=frame))
    assert moved.changed.sum() == 1 and moved.changed[3, tiny_prepared.columns.index("price")]
    with pytest.raises(ConfigError, match="has 47 rows"):
        apply_edit(tiny_prepared, "test", WINDOW, Edit("table", table=frame.iloc[1:]))
    with pytest.raises(ConfigError, match="lacks column 'load'"):
        apply_edit(tiny_prepared, "test", WINDOW, Edit("table", table=frame.drop(columns="load")))


@pytest.mark.parametrize("text", ["none", "spike:t=40,size=0", "shift:t=3,size=0", f"paste:window={WINDOW},t=0,length=48"])
def test_an_edit_that_changes_nothing_changes_nothing_bitwise(tiny_trained, tiny_prepared, text):
    c = counterfactual(tiny_trained[0].model, tiny_prepared, "test", WINDOW, text, seed=3)
    assert np.array_equal(c.forecast.original.to_numpy(), c.forecast.edited.to_numpy())
    assert (c.forecast.difference == 0).all() and not c.inputs.changed.any()
    assert np.array_equal(c.scores.mbar_original.to_numpy(), c.scores.mbar_edited.to_numpy())
    prob = c.selection[c.selection.attention == "prob"]
    assert len(prob) == 3 * 4 and (prob.jaccard == 1).all() and (prob.n_entered == 0).all()
    for s in c.sites:
        assert np.array_equal(s.rows_original, s.rows_edited)
    # what lets the editor reuse the first run for such an edit: the edited batch is the same, bit for bit
    plain, edited, _ = edited_batches(tiny_prepared, "test", WINDOW, parse_edit(text))
    for field in ("x_enc", "mark_enc", "x_dec", "mark_dec"):
        assert torch.equal(getattr(plain, field), getattr(edited, field)), field


def test_original_run_is_the_plain_forecast_and_the_edit_moves_the_selection(tiny_trained, tiny_prepared):
    model = tiny_trained[0].model
    c = counterfactual(model, tiny_prepared, "test", WINDOW, "shift:t=10,size=2", seed=5)
    plain = masked_window_forecast(model, tiny_prepared, "test", WINDOW, None, seed=5).table
    # recording the rows computes them explicitly (SDPA otherwise): the same maths up to float rounding
    np.testing.assert_allclose(c.forecast.original.to_numpy(), plain.baseline.to_numpy(), rtol=1e-6)
    light = counterfactual(model, tiny_prepared, "test", WINDOW, "shift:t=10,size=2", seed=5, rows=False)
    assert np.array_equal(light.forecast.original.to_numpy(), plain.baseline.to_numpy())
    assert np.array_equal(c.forecast.truth.to_numpy(), plain.truth.to_numpy())
    assert c.max_abs_difference > 0
    for row in c.selection[c.selection.attention == "prob"].itertuples():  # Jaccard, entered, left agree
        s = c.site(row.site)
        a, b = set(s.selected_original[row.head]), set(s.selected_edited[row.head])
        assert row.jaccard == pytest.approx(len(a & b) / len(a | b))
        assert {int(q) for q in row.entered.split(";") if q} == b - a
        assert {int(q) for q in row.left.split(";") if q} == a - b
    assert (c.selection.jaccard < 1).any()
    enc = c.attention_row("encoder.0.0", 0, int(c.site("encoder.0.0").selected_original[0, 0]))
    assert enc.computed_original.all() and np.isclose(enc.original.sum(), 1)
    lazy = next(q for q in range(48) if q not in set(c.site("encoder.0.0").selected_original[0]))
    row = c.attention_row("encoder.0.0", 0, lazy)
    assert not row.computed_original.any() and np.allclose(row.original, 1 / 48)


def cross_off(model):
    gates = model.full_gates(1)
    for site in model.sites:
        if site.kind == "cross":
            gates[0, site.index] = 0.0
    return HeadMask(gates)


def test_with_cross_attention_off_only_the_label_part_reaches_the_forecast(tiny_trained, tiny_prepared):
    """Zero every cross-attention head and the decoder reads the encoder window only through x_dec's known part
    (its last label_len steps): an edit before it cannot move the forecast, an edit inside it must (which also
    shows that x_dec follows the edited window)."""
    model = tiny_trained[0].model
    mask = cross_off(model)
    early = f"spike:t={SEQ - LABEL - 3},size=4"  # steps 0 … 23 are not in the decoder's label part
    hidden = counterfactual(model, tiny_prepared, "test", WINDOW, early, seed=1, head_mask=mask)
    assert np.array_equal(hidden.forecast.original.to_numpy(), hidden.forecast.edited.to_numpy())
    encoder_scores = hidden.scores[hidden.scores.site == "encoder.0.0"]
    assert (encoder_scores.mbar_original != encoder_scores.mbar_edited).any()  # the edit did reach the encoder
    assert counterfactual(model, tiny_prepared, "test", WINDOW, early, seed=1).max_abs_difference > 1e-4
    inside = counterfactual(model, tiny_prepared, "test", WINDOW, f"spike:t={SEQ - 5},size=4", seed=1, head_mask=mask)
    assert inside.max_abs_difference > 1e-4


def test_causal_decoder_scores_before_an_edit_are_unchanged(tiny_trained, tiny_prepared):
    """Decoder position p = t − (seq_len − label_len) is edited. The value embedding (kernel 3) reaches p − 1 … p + 1,
    and a causal query i is scored on keys j ≤ i only: queries i < p − 1 keep their sampled M̄ exactly."""
    model = tiny_trained[0].model
    t = SEQ - 8
    p = t - (SEQ - LABEL)
    c = counterfactual(model, tiny_prepared, "test", WINDOW, f"spike:t={t},size=5", seed=2, rows=False)
    dec = c.scores[c.scores.site == "decoder_self.0"]
    before, after = dec[dec.position < p - 1], dec[dec.position >= p - 1]
    assert len(before) == 4 * (p - 1)
    assert np.array_equal(before.mbar_original.to_numpy(), before.mbar_edited.to_numpy())
    assert (after.mbar_original != after.mbar_edited).any()
    assert all(s.rows_original is None for s in c.sites)
