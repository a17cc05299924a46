"""Known answers: the instruments tested against structure planted in the data (analysis.planted.selftest), and for any
model on any data, every head's attention rows replaced by uniform and by permuted rows (analysis.heads.faithfulness).

Both run in background threads behind their Run buttons, once per (model, data, settings) for every tab."""
from __future__ import annotations

import hashlib

import streamlit as st

from informer_lab.analysis.errors import InformerLabError
from informer_lab.analysis.planted.known_answer import check_fits
from informer_lab.analysis.planted.synth import Answer, answer_json
from informer_lab.source import command
from informer_lab.ui import evidence, state, widgets
from informer_lab.ui.data_model.known_answer import answer_of, remember, summary
from informer_lab.ui.known_answers import benchmark, charts, jobs, tables
from informer_lab.ui.tables import file_stem

st.title("Known answers")
st.caption("Before reading what an instrument says about a model, test it where the answer is known: a series "
           "generated with planted structure (Data & model → *Known answer*), a model trained on it, and each "
           "instrument's reading set against the answer, with a 95 % interval. Below, for any model and data, the "
           "two baselines of attention as explanation. CLI: "
           f"`{command('selftest …')}` and `{command('faithfulness …')}`.")
evidence.note('faithfulness')
model, data, prepared, seed, checkpoint, config = state.require_page()


def _answer() -> Answer | None:
    answer = answer_of(data.ref)
    if answer is not None:
        return answer
    upload = st.file_uploader(f"The answer file of this data (FILE.answer.json, as `{command('synth')}` writes it)",
                              type=["json"], key="ka_answer_upload")
    if upload is None:
        st.info(f"{data.ref.name} has no planted answer in this tab. Generate a series on **Data & model** "
                "(source *Known answer*), train a model on it, and come back; or upload the answer file of a "
                f"series made with `{command('synth')}`.", icon=":material/info:")
        return None
    from informer_lab.analysis import jsonfile

    try:  # capped in size and depth: a file of nested brackets is one line, not a RecursionError
        answer = Answer.from_dict(jsonfile.loads(upload.getvalue(), upload.name, max_bytes=64 << 20))
        check_fits(answer, data.frame)
    except (InformerLabError, ValueError) as err:
        st.error(f"{upload.name}: {err}")
        return None
    remember(data.ref, answer)
    return answer


st.header("Self-test of the instruments", divider="gray")
answer = _answer()
if answer is not None:
    st.markdown(summary(answer, prepared.spec.pred_len))
    c = st.columns([1, 1, 3], vertical_alignment="bottom")
    ig_windows = c[0].number_input("IG windows", 2, 64, 8, key="ka_ig_windows",
                                   help="Test windows Integrated Gradients reads, at three horizon steps each")
    run = c[1].button("Run the self-test", type="primary", icon=":material/play_arrow:", key="ka_run_selftest")
    digest = hashlib.sha256(answer_json(answer).encode()).hexdigest()[:16]
    key = (model.key, data.key, digest, seed, int(ig_windows))
    asked = st.session_state.setdefault("ka_selftests", [])
    if run and key not in asked:
        asked.append(key)
    if key in asked:
        result = widgets.phase_job_result(jobs.self_test_job(*key, checkpoint, prepared, data.frame, answer))
        if result is not None:
            (st.success if result.passed else st.error)(result.verdict())
            widgets.table(tables.self_test_table(result), f"{file_stem(data.ref.name)}-selftest", "ka_selftest")
            st.caption(" ".join(result.notes) + ". An *instrument* row that fails on a model that learned says the "
                       "instrument misreads it; a row about *this model* may fail only because the model does not "
                       "work that way (it need not route a lag through one head).")
    else:
        st.info("Press **Run the self-test**: about a minute for a small model.", icon=":material/play_circle:")

st.header("Is attention an explanation? Uniform and permuted rows", divider="gray")
st.caption("Every head's computed attention rows replaced by uniform rows over the keys each query may see "
           "(Wiegreffe & Pinter 2019) and by its own weights shuffled among them (Jain & Wallace 2019), against "
           "the change two ProbSparse key samples of the unchanged model already make. A head whose forecast moves "
           "no more than that under either is not explained by its particular weights. Any model, any data.")
c = st.columns([1, 1, 1, 2], vertical_alignment="bottom")
windows = c[0].number_input("Windows", 8, 2048, 128, key="ka_fb_windows", help="Test windows, spread evenly")
draws = c[1].number_input("Permutation draws", 1, 50, 5, key="ka_fb_draws")
key_seeds = c[2].number_input("Other key samples", 1, 20, 3, key="ka_fb_keys")
run = c[3].button("Run the baselines", type="primary", icon=":material/play_arrow:", key="ka_run_baselines")
key = (model.key, data.key, seed, int(windows), int(draws), int(key_seeds))
asked = st.session_state.setdefault("ka_baselines", [])
if run and key not in asked:
    asked.append(key)
if key in asked:
    result = widgets.phase_job_result(jobs.baselines_job(*key, checkpoint, prepared))
    if result is not None:
        t = result.table
        moved = int(t["reading"].str.startswith("its weights matter").sum())
        if t["uniform_beyond_p"].notna().any():
            raw = int((t["uniform_beyond_raw"] & t["permuted_beyond_raw"]).sum())
            st.markdown(f"**{moved} of {len(t)} heads** move the forecast beyond key-sample noise under both "
                        f"baselines (Benjamini–Hochberg at q = 0.05 across {2 * len(t)} tests, {len(t)} heads × 2 "
                        f"baselines; raw, each interval alone: {raw}). Unchanged test MSE {result.mse:.4f}; floor "
                        f"{result.floor:.3g} (upper {result.floor_hi:.3g}).")
        else:
            st.warning(f"**No evidence either way:** {t['interval'].iloc[0]}. No head is listed beyond the floor; "
                       "choose more windows.", icon=":material/info:")
        widgets.chart(charts.baselines_figure(result), f"{file_stem(data.ref.name)}-attention-baselines",
                      "ka_baselines_chart")
        widgets.table(tables.baselines_table(result), f"{file_stem(data.ref.name)}-attention-baselines",
                      "ka_baselines")
        st.caption(" · ".join(result.notes))
else:
    st.info("Press **Run the baselines**: every head × (1 + draws) passes over the windows.",
            icon=":material/play_circle:")

st.header("Every instrument against planted answers (benchmark)", divider="gray")
benchmark.draw()
