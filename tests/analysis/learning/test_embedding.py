"""The input embedding a model gets: the season's lag by its rule, and a lags model the lab trains, saves and loads."""
import numpy as np
import pytest
import torch

from informer_lab.analysis.learning.embedding import embedding_fields, lag_history, seasonal_lag


@pytest.mark.parametrize("freq, seq_len, pred_len, lag", [
    ("h", 96, 24, 24),  # a day back: the forecast's last step reads the window's last row
    ("h", 96, 25, 48),  # the first multiple of the season ≥ pred_len, so no step reads a zero placeholder
    ("h", 96, 48, 48),
    ("h", 96, 49, None),  # 72 > 96 / 2: the encoder would keep fewer than half the window's positions
    ("15min", 96, 24, None),  # a day is 96 steps: the whole window
    ("15min", 1440, 96, 96),
    ("D", 96, 24, 28),  # four weeks
    ("MS", 36, 12, 12),
    ("7min", 96, 24, None),  # no obvious season
    (None, 96, 24, None),
])
def test_the_seasons_lag_is_its_first_multiple_at_or_past_the_horizon_within_half_the_window(freq, seq_len,
                                                                                              pred_len, lag):
    assert seasonal_lag(freq, seq_len, pred_len) == lag
    if lag is not None:
        assert lag >= pred_len and lag % seasonal_lag(freq, 10 * lag, 1) == 0 and 2 * lag <= seq_len


def test_auto_falls_back_to_conv_and_lags_says_why_it_cannot_be():
    assert embedding_fields("auto", "h", 96, 24) == {"embedding": "lags", "lags": (0, 24), "instance_scaling": "std",
                                                     "placeholders": "last"}
    # where the lag does not fit: conv with RevIN (closer to the Bayes MSE than plain conv on the 15-minute family)
    assert embedding_fields("auto", "15min", 96, 24) == {"embedding": "conv", "revin": True}
    assert embedding_fields("auto", None, 96, 24) == {"embedding": "conv", "revin": True}
    assert embedding_fields("conv", "15min", 96, 24) == {"embedding": "conv"}  # the paper's: no RevIN unless asked
    assert embedding_fields("auto", "h", 96, 24, revin=True) == {"embedding": "conv"}
    assert embedding_fields("auto", "h", 96, 24, replicas=3) == {"embedding": "conv"}
    with pytest.raises(ValueError, match="half of seq_len 96"):
        embedding_fields("lags", "15min", 96, 24)
    with pytest.raises(ValueError, match="RevIN"):
        embedding_fields("lags", "h", 96, 24, revin=True)
    with pytest.raises(ValueError, match="one encoder replica"):
        embedding_fields("lags", "h", 96, 24, replicas=2)
    with pytest.raises(ValueError, match="one of auto, conv, lags"):
        embedding_fields("patches", "h", 96, 24)


@pytest.mark.parametrize("features", ["MS", "M"])
def test_a_lags_model_trains_saves_and_loads_to_the_same_forecast(sample_frame, tmp_path, features):
    from informer_lab.analysis.checkpoints.folder import load_checkpoint
    from informer_lab.analysis.data import DataSpec, prepare
    from informer_lab.analysis.learning.training import TrainSettings, predict
    from informer_lab.analysis.learning.workflow import ModelSize, train_on_frame
    from tests.conftest import TINY_SIZE

    spec = DataSpec("load", features, 48, 24, 12)
    checkpoint, result = train_on_frame(sample_frame, spec, ModelSize(**{**TINY_SIZE, "embedding": "lags"}),
                                        TrainSettings(epochs=1, batch_size=32, max_steps_per_epoch=6, seed=0),
                                        out=tmp_path / "run")
    c = checkpoint.model.config
    assert (c.embedding, c.lags, c.instance_scaling, c.history_len, c.enc_len) == ("lags", (0, 24), "std", 24, 24)
    assert c.placeholders == "last"  # and the saved config keeps it: `loaded.model.config == c` below
    assert c.c_out == (1 if features == "MS" else c.enc_in) and np.isfinite(result.test.mse)
    loaded = load_checkpoint(tmp_path / "run")
    prepared = prepare(sample_frame, spec)
    torch.manual_seed(0)
    first = predict(checkpoint.model, prepared, "test", seed=0)[0]
    again = predict(loaded.model, prepared, "test", seed=0)[0]
    assert loaded.model.config == c and np.array_equal(first, again)


def test_auto_puts_the_lags_history_before_a_window_too_short_for_it():
    assert lag_history("auto", "h", 96, 24) == 0  # a day fits in half the window: the window holds it
    assert lag_history("auto", "15min", 96, 24) == 96  # a day is the whole window: 96 rows go before it
    assert lag_history("auto", "15min", 1440, 96) == 0
    assert lag_history("auto", "h", 24, 6) == 24  # windows of 48 rows, the encoder reading 24
    assert lag_history("auto", "min", 96, 24) == 0  # a day of minutes is 15 windows: conv with RevIN
    for kept in (dict(revin=True), dict(replicas=2)):
        assert lag_history("auto", "15min", 96, 24, **kept) == 0
    assert lag_history("lags", "15min", 96, 24) == lag_history("conv", "15min", 96, 24) == 0  # as asked
    assert lag_history("auto", None, 96, 24) == 0


@pytest.mark.parametrize("freq, rows, windows, want", [
    ("h", 1200, (96, 48, 24), ("lags", (0, 24), False, 96)),  # a day back inside the window
    ("15min", 1200, (96, 48, 24), ("lags", (0, 96), False, 192)),  # 96 rows before each window of 96
    ("15min", 300, (96, 48, 24), ("conv", (), True, 96)),  # no train window of 192 + 24 rows: RevIN instead
    ("15min", 2400, (1440, 288, 96), ("lags", (0, 96), False, 1440)),  # long input: the day inside the window
    ("min", 4400, (1440, 288, 96), ("lags", (0, 1440), False, 2880)),  # a day of minutes: 1,440 rows before it
])
def test_the_default_model_gets_the_seasons_lags_where_the_file_holds_them_else_revin(freq, rows, windows, want,
                                                                                    tmp_path):
    """ModelSize() (what train, the form and a study use unless told) at the paper's windows and at long ones: the
    checkpoint holds the resolved choice and the windows it reads, and loads to them."""
    from informer_lab.analysis.checkpoints.folder import load_checkpoint
    from informer_lab.analysis.data import DataSpec, load_csv
    from informer_lab.analysis.learning.training import TrainSettings
    from informer_lab.analysis.learning.workflow import ModelSize, train_on_frame
    from informer_lab.analysis.planted.synth import SynthSpec, generate

    table, _ = generate(SynthSpec(kind="seasonal_ar", rows=rows, freq=freq, seed=0))
    frame = load_csv(table.to_csv(index=False).encode("utf-8"))
    size = ModelSize(d_model=16, n_heads=2, d_ff=32)
    assert size.embedding == ModelSize().embedding == "auto"
    checkpoint, result = train_on_frame(frame, DataSpec("y", "S", *windows), size,
                                        TrainSettings(epochs=1, max_steps_per_epoch=4, seed=0), out=tmp_path / "run")
    c = checkpoint.model.config
    assert (c.embedding, tuple(c.lags), c.revin, c.seq_len) == want and np.isfinite(result.test.mse)
    assert c.seq_len - c.history_len >= windows[0] // 2 and checkpoint.schema.spec.seq_len == c.seq_len
    loaded = load_checkpoint(tmp_path / "run")
    assert loaded.model.config == c and loaded.schema.spec == checkpoint.schema.spec


def test_the_screens_words_for_an_embedding_name_every_lag_it_reads():
    from informer_lab.analysis.learning.embedding import describe_embedding

    assert describe_embedding({"embedding": "lags", "lags": (0, 96)}) == "lags (0, 96): each step with its value 96 " \
                                                                         "steps back"
    assert describe_embedding({"embedding": "lags", "lags": (1, 2, 7)}).endswith("values 1, 2, 7 steps back")
    assert describe_embedding({"embedding": "conv", "revin": True}) == "conv with RevIN"
    assert describe_embedding({"embedding": "conv"}) == "conv (the paper's)"


@pytest.mark.parametrize("unit_roots, withheld", [("withhold", ("walk",)), ("keep", ())])
def test_withhold_takes_the_level_of_an_input_with_a_unit_root_and_keep_of_none(tmp_path, unit_roots, withheld):
    """A random walk beside a seasonal target and a stationary AR(1) column: `withhold` takes the walk's level alone
    (its name on the model's card and in the checkpoint, which loads to the same forecast); `keep` (the default)
    reads every level."""
    from informer_lab.analysis.checkpoints.folder import load_checkpoint
    from informer_lab.analysis.data import DataSpec, load_csv, prepare
    from informer_lab.analysis.learning.training import TrainSettings, predict
    from informer_lab.analysis.learning.workflow import ModelSize, train_on_frame
    from informer_lab.analysis.planted.synth import SynthSpec, generate
    from informer_lab.ui.tables import config_rows

    table, answer = generate(SynthSpec(kind="seasonal_ar", rows=1200, seed=0, irrelevant=1))
    table.insert(1, "walk", np.random.default_rng(7).standard_normal(len(table)).cumsum())
    frame = load_csv(table.to_csv(index=False).encode("utf-8"))
    spec = DataSpec(answer.target, "MS", 96, 48, 24)
    checkpoint, _ = train_on_frame(frame, spec, ModelSize(d_model=16, n_heads=2, d_ff=32, unit_roots=unit_roots),
                                   TrainSettings(epochs=1, max_steps_per_epoch=3, seed=0), out=tmp_path / "run")
    c, columns = checkpoint.model.config, checkpoint.schema.columns
    assert c.embedding == "lags" and tuple(columns[i] for i in c.level_free) == withheld
    assert ModelSize().unit_roots == "keep"
    card = dict(config_rows(c, checkpoint.schema))["embedding"]
    assert ("levels withheld (a unit root in the training split): walk" in card) == bool(withheld)
    loaded = load_checkpoint(tmp_path / "run")
    prepared = prepare(frame, spec)
    assert loaded.model.config == c
    assert np.array_equal(predict(checkpoint.model, prepared, "test", seed=0)[0],
                          predict(loaded.model, prepared, "test", seed=0)[0])


def test_an_unknown_unit_roots_choice_is_refused_by_name(sample_frame):
    from informer_lab.analysis.data import DataSpec, prepare
    from informer_lab.analysis.learning.training import config_for

    prepared = prepare(sample_frame, DataSpec("load", "MS", 48, 24, 12))
    with pytest.raises(ValueError, match="unit_roots must be one of keep, withhold, got 'difference'"):
        config_for(prepared, embedding="auto", unit_roots="difference")


def test_hfs_zero_placeholders_stay_one_config_field_away(sample_frame):
    from informer_lab.analysis.data import DataSpec, prepare
    from informer_lab.analysis.learning.training import config_for

    prepared = prepare(sample_frame, DataSpec("load", "MS", 48, 24, 12))
    assert config_for(prepared, embedding="auto").placeholders == "last"
    assert config_for(prepared, embedding="auto", placeholders="zero").placeholders == "zero"
    assert config_for(prepared, embedding="conv").placeholders == "zero"  # the conv embedding reads x_dec as given
