"""The Data page's Known answer source and the Known answers screen (AppTest)."""
from __future__ import annotations

import pytest

from tests.ui.helpers import DATA_PAGE, errors, run_until
from informer_lab.ui import state

PAGE = "ui/known_answers/page.py"


def _button(at, label: str):
    found = [b for b in at.button if b.label == label]
    assert found, f"no button {label!r} among {[b.label for b in at.button]}"
    return found[0]


def test_the_known_answer_source_generates_a_series_with_its_answer(open_app):
    at = open_app()
    at.radio(key="data_source").set_value("Known answer (generated)").run()
    assert not at.exception, at.exception
    assert any("Generate a series" in i.value for i in at.info)
    at.selectbox(key="ka_kind").set_value("driver")
    at.number_input(key="ka_rows").set_value(3000)
    at.text_input(key="ka_lags").set_value("12")
    at.number_input(key="ka_driver_lag").set_value(4)
    _button(at, "Generate").click().run()
    assert not at.exception, at.exception
    ref = at.session_state[state.DATA_KEY]
    assert ref.source == "synth" and ref.name == "driver-seed0.csv"
    text = " ".join(m.value for m in at.markdown)
    assert "**Planted:** `y` at lag 12, `driver` at lag 4" in text and "**Bayes MSE**" in text
    assert [d.label for d in at.get("download_button")][:2] == ["Download the CSV", "Download the answer"]
    assert at.session_state["known_answers"][ref.digest]["kind"] == "driver"
    # a process that is not stationary is refused, naming the option, and the generated data stays
    at.selectbox(key="ka_kind").set_value("seasonal_ar")
    at.text_input(key="ka_lags").set_value("24,168")
    at.text_input(key="ka_coefs").set_value("0.7,0.5")
    _button(at, "Generate").click().run()
    assert any("stationary" in e for e in errors(at)), errors(at)
    assert at.session_state[state.DATA_KEY] == ref


@pytest.fixture
def planted_run(runs_dir, tmp_path):
    """A quick model on a generated seasonal AR (lag 12): (the runs folder name, data ref, bytes, answer)."""
    from informer_lab.analysis.data import DataSpec, load_csv
    from informer_lab.analysis.planted.synth import SynthSpec, generate
    from informer_lab.analysis.learning.training import TrainSettings
    from informer_lab.analysis.learning.workflow import ModelSize, train_on_frame
    from informer_lab.ui import frames

    frame_df, answer = generate(SynthSpec(rows=3000, lags=(12,), seed=2))
    data = frame_df.to_csv(index=False).encode()
    frame = load_csv(data)
    train_on_frame(frame, DataSpec("y", "MS", 48, 24, 12), ModelSize(d_model=16, n_heads=2, d_ff=32),
                   TrainSettings(epochs=1, max_steps_per_epoch=20), out=runs_dir / "planted")
    ref = state.DataRef("synth", "seasonal_ar-seed2.csv", frames.digest(data))
    return "planted", ref, data, answer


def test_the_self_test_runs_against_the_answer_of_the_active_data(open_app, runs_dir, planted_run):
    name, ref, data, answer = planted_run
    at = open_app()
    at.session_state[state.MODEL_KEY] = state.folder_ref(runs_dir / name)
    at.session_state[state.DATA_BYTES] = {ref.digest: data}
    at.session_state[state.DATA_KEY] = ref
    at.session_state["known_answers"] = {ref.digest: answer.to_dict()}
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert any("Planted:" in m.value for m in at.markdown)
    at.number_input(key="ka_ig_windows").set_value(2)
    at.button(key="ka_run_selftest").click().run()
    run_until(at, lambda a: any(e.value.startswith("FAIL") for e in a.error) or any(s.value.startswith("PASS")
                                                                                   for s in a.success))
    verdict = [e.value for e in at.error if e.value.startswith("FAIL")]
    assert verdict == ["FAIL: the model has not learned (test MSE over 1.5× the Bayes MSE): the instruments cannot be "
                       "judged on it"]  # 20 steps learn nothing, and the screen says so
    table = next(d.value for d in at.dataframe if "check" in d.value.columns)
    assert list(table["check"]) == ["learned", "ig_top", "ig_mass", "ig_sign", "ig_completeness",
                                    "importance_agreement", "head_lag", "head_knockout", "topu_events", "rollout_mass",
                                    "flow_mass"]
    assert table.set_index("check").loc["topu_events", "result"] == "n/a"
    assert table.set_index("check").loc["ig_top", "result"] == "not judged"  # no instrument fails on such a model
    # the banner, above it all: worse than seasonal naive, or (too few windows for an interval) no verdict against it
    assert any("seasonal naive" in w.value and "may explain little" in w.value for w in at.warning)


def test_without_an_answer_the_screen_asks_for_one_and_refuses_a_foreign_file(open_app):
    import json

    from informer_lab.analysis.planted.synth import SynthSpec, answer_json, generate

    at = open_app(PAGE)
    assert any("has no planted answer" in i.value for i in at.info)
    _, answer = generate(SynthSpec(rows=500, lags=(12,)))
    at.file_uploader(key="ka_answer_upload").set_value(("x.answer.json", answer_json(answer).encode(),
                                                       "application/json")).run()
    assert any("belongs to another file" in e for e in errors(at)), errors(at)
    at.file_uploader(key="ka_answer_upload").set_value(("bad.json", json.dumps({"kind": 1}).encode(),
                                                       "application/json")).run()
    assert any("not an answer file" in e for e in errors(at)), errors(at)


def test_uniform_and_permuted_rows_for_every_head_of_the_active_model(open_app):
    at = open_app(PAGE)
    at.number_input(key="ka_fb_windows").set_value(16)
    at.number_input(key="ka_fb_draws").set_value(2)
    at.number_input(key="ka_fb_keys").set_value(1)
    at.button(key="ka_run_baselines").click().run()
    run_until(at, lambda a: any("heads" in m.value and "beyond key-sample noise" in m.value for m in a.markdown))
    table = next(d.value for d in at.dataframe if "reading" in d.value.columns)
    assert len(table) == 16 and table["head"].iloc[0] == "encoder.0.0:0"
    assert at.get("plotly_chart"), "the chart of changes against the floor"


def test_the_benchmark_table_reads_the_lab_homes_benchmarks(open_app, tmp_path, monkeypatch):
    import pandas as pd

    home = tmp_path / "home"
    folder = home / "instrument_benchmarks" / "demo"
    folder.mkdir(parents=True)
    rows = [("seasonal_ar", seed, "integrated_gradients", "auprc", value) for seed, value in enumerate((0.5, 0.7, 0.6))]
    rows += [("seasonal_ar", seed, "rollout", "auprc", 0.1 + seed / 10) for seed in range(3)]
    rows += [("driver", 0, "rollout", "auprc", 0.9)]
    pd.DataFrame(rows, columns=["kind", "seed", "instrument", "metric", "value"]).assign(low=float("nan"),
                                                                                         high=float("nan")) \
        .to_csv(folder / "scores.csv", index=False)
    monkeypatch.setenv("INFORMER_LAB_HOME", str(home))
    at = open_app("ui/known_answers/page.py")
    assert not at.exception
    table = next(d.value for d in at.dataframe if "auprc" in d.value.columns)
    cells = dict(zip(table["instrument"], table["auprc"]))
    assert cells["integrated_gradients"] == "0.6 [0.5, 0.7]" and cells["rollout"].startswith("0.2 [0.1, 0.3]")
    at.selectbox(key="ka_bench_kind").set_value("driver").run()
    table = next(d.value for d in at.dataframe if "auprc" in d.value.columns)
    assert list(table["instrument"]) == ["rollout"] and table["auprc"].iloc[0] == "0.9"
