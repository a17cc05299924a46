"""Studies: many models (seeds × settings) trained and analysed on Ray. Their runs (live while they train), the
findings across seeds with intervals, and the role of every head in every seed: click a cell to open that head of
that run on the Sparsity explorer."""
from __future__ import annotations

import streamlit as st

from informer_lab.analysis.errors import InformerLabError
from informer_lab.source import command
from informer_lab.study.findings import load_findings
from informer_lab.study.folder import request_stop, stop_requested
from informer_lab.study.plan import format_seeds
from informer_lab.study.status import STATES
from informer_lab.ui import nav, settings, state, widgets
from informer_lab.ui.studies import charts, launch, tables
from informer_lab.ui.tables import file_stem

PICK_KEY = "st_roles"
SPARSITY_PAGE = nav.page_file("sparsity")

st.title("Studies")
st.caption("A study trains one model per seed × setting as Ray tasks (in a process of its own, so the app stays "
           "responsive) and analyses each: the single-head sweep, gradient importance, top-u agreement, every "
           "head's lag profile and role, the forecast lens per layer and every decoder head's direct share, each with a 95 % interval over windows. Across "
           "seeds it matches heads by their lag profiles and reports what holds in every seed. CLI: "
           f"`{command('study --csv … --target … --seeds 0-7 --grid attention=prob,full --out studies/NAME')}`.")

root = settings.studies_dir()
folders = tables.study_folders(root)


# ------------------------------------------------------------------------------------------ start one
def _start_form() -> None:
    try:
        data = state.active_data()
    except InformerLabError as err:
        st.error(f"The active data cannot be used: {err}")
        return
    frame = data.frame
    with st.form("st_start", border=False):
        c = st.columns([1.6, 1, 1, 1])
        name = c[0].text_input("Study name", value=f"{file_stem(frame.name)}-study", key="st_name")
        seeds = c[1].text_input("Seeds", value="0-3", key="st_seeds", help="0-7, 0,3,9 or 2-4,8")
        target = c[2].selectbox("Target", list(frame.columns), index=len(frame.columns) - 1, key="st_target")
        epochs = c[3].number_input("epochs", 1, 50, 2, key="st_epochs")
        c = st.columns(5)
        seq = c[0].number_input("seq_len", 2, 4096, 96, key="st_seq")
        label = c[1].number_input("label_len", 1, 4096, 48, key="st_label")
        pred = c[2].number_input("pred_len", 1, 2048, 24, key="st_pred")
        d_model = c[3].number_input("d_model", 4, 1024, 64, step=4, key="st_d_model")
        steps = c[4].number_input("max steps per epoch", 1, 100000, 100, key="st_steps")
        grid = st.text_input("Grid (optional)", placeholder="attention=prob,full factor=3,5 revin=off,on",
                             key="st_grid")
        revin = st.checkbox("RevIN: reversible instance normalisation", key="st_revin",
                            help="Every run standardises each window by its own statistics (Kim et al. 2022); "
                                 "to compare, leave this off and vary it in the grid: revin=off,on")
        windows = st.number_input("Windows per analysis", 32, 100000, 512, key="st_windows")
        go = st.form_submit_button(f"Start the study on {frame.name}", type="primary", icon=":material/play_arrow:")
    if go:
        try:
            name = _study_name(name)
            process = launch.start(name, frame.name, state.data_bytes(data.ref), data.ref.options,
                                   ["--target", target, "--seq-len", str(seq), "--label-len", str(label),
                                    "--pred-len", str(pred), "--d-model", str(d_model), "--epochs", str(epochs),
                                    "--max-steps", str(steps), "--learning-rate", "0.001"]
                                   + (["--revin"] if revin else []),
                                   seeds, grid.split(), ["errors", "sweep", "importance", "agreement", "roles", "lens",
                                                         "shares", "composition"],
                                   int(windows))
        except (InformerLabError, OSError) as err:
            st.error(str(err))
        else:
            st.session_state["st_process"] = process
            st.session_state["st_study"] = name
            st.rerun()


def _study_name(name: str) -> str:
    from informer_lab.ui.data_model.tables import check_run_name  # the same rule as run names

    return check_run_name(name)


with st.expander("Start a study on the active data", expanded=not folders, icon=":material/science:"):
    _start_form()

if not folders:
    st.info(f"No study in `{root}` yet: start one above, or run `{command(f'study … --out {root}/NAME')}`.")
    state.stop_page()

names = [f.name for f in folders]
if st.session_state.get("st_study") not in names:
    st.session_state["st_study"] = names[0]
chosen = st.selectbox(f"Study (in `{root}`)", names, key="st_study")
folder = next(f for f in folders if f.name == chosen)
plan = folder.plan
grid = ", ".join(f"{k} = {', '.join(map(str, v))}" for k, v in plan.grid.items()) or "none"
st.markdown(f"**{chosen}**: `{plan.csv}` (SHA-256 {plan.fingerprint[:12]}…) · target `{plan.spec.target}` · "
            f"seq {plan.spec.seq_len} / label {plan.spec.label_len} / pred {plan.spec.pred_len} · d_model "
            f"{plan.size.d_model}, {plan.size.n_heads} heads · seeds {format_seeds(plan.seeds)} · grid: {grid} · "
            f"{plan.max_windows} windows per analysis on the {plan.split} split")


# ------------------------------------------------------------------------------------------ runs
def _stop() -> None:
    request_stop(folder.path)
    st.toast("Stop requested: the study stops between tasks; start it again to resume.")


def runs_panel() -> None:
    """Where the study stands (counts, elapsed, ETA, a Stop button while it runs) and its runs, filterable by setting
    and state, a page at a time."""
    live = tables.status(folder.path)
    total = len(plan.runs())
    words = tables.progress_words(live, total)
    counts = words["counts"]
    cells = st.columns(6)
    cells[0].metric("done", f"{counts['done']} / {total}")
    cells[1].metric("running", counts["training"] + counts["analysing"])
    cells[2].metric("queued", counts["queued"])
    cells[3].metric("failed", counts["failed"] + counts["missing"])
    cells[4].metric("elapsed", words["elapsed"])
    cells[5].metric("ETA", words["eta"])
    line = st.columns([4, 1.2], vertical_alignment="center")
    line[0].caption(f"The study is **{words['state']}**." + (" A stop is requested: running tasks finish, no new one "
                                                              "starts." if stop_requested(folder.path) else ""))
    if words["running"]:
        line[1].button("Stop the study", key="st_stop", icon=":material/stop_circle:", on_click=_stop,
                       disabled=stop_requested(folder.path),
                       help="Stops between tasks: the running ones finish and are kept; start it again to resume.")
    runs = tables.runs_table(folder.path, plan)
    pick = st.columns([2.4, 2.4, 1])
    names = tables.settings_of(runs)
    chosen_settings = pick[0].multiselect("Settings", names, key="st_runs_settings", placeholder="every setting") \
        if len(names) > 1 else []
    chosen_states = pick[1].multiselect("States", list(STATES), key="st_runs_states", placeholder="every state")
    shown = tables.filter_runs(runs, chosen_settings, chosen_states)
    pages = max(1, -(-len(shown) // tables.PAGE_ROWS))
    page = pick[2].number_input("Page", 1, pages, 1, key="st_runs_page") if pages > 1 else 1
    rows, pages = tables.page_of(shown, page)
    widgets.table(rows, f"study-{chosen}-runs", "st_runs",
                  column_config={"progress": st.column_config.ProgressColumn(min_value=0, max_value=1),
                                 "test MSE": st.column_config.NumberColumn(format="%.4f"),
                                 "test MAE": st.column_config.NumberColumn(format="%.4f")})
    st.caption(f"{len(shown)} of {len(runs)} runs" + (f"; page {page} of {pages}, {tables.PAGE_ROWS} a page"
                                                       if pages > 1 else "") + ".")


@st.fragment(run_every=2.0)
def live_runs() -> None:
    runs_panel()
    if tables.finished(folder.path):
        st.rerun()


st.subheader("Runs")
if tables.finished(folder.path):
    runs_panel()
else:
    live_runs()
    tail = launch.log_tail(folder.path)
    if tail:
        with st.expander("The study's output (study.log)"):
            st.code(tail, language=None)

def _study_html(path: str) -> str:
    from informer_lab.analysis.reports.report import render_html, study_report
    return render_html(study_report(path))


findings = load_findings(folder.path)
if not findings:
    st.info("Findings appear when every run has finished.")
    state.stop_page()

# ------------------------------------------------------------------------------------------ findings
head, button = st.columns([3, 2], vertical_alignment="bottom")
head.subheader("Findings across seeds")
button.download_button("Download the whole study as a report (HTML)", lambda: _study_html(str(folder.path)),
                       file_name=f"study-{file_stem(chosen)}-report.html", mime="text/html", key="st_report",
                       on_click="ignore", icon=":material/summarize:",
                       help="The plan, every run, the findings with their intervals, removable heads and the role "
                            "matrix in one HTML file that opens offline (also: {command('report --study DIR')}).")
summary = tables.findings_rows(findings)
widgets.table(summary, f"study-{chosen}-findings", "st_findings",
              column_config={c: st.column_config.NumberColumn(format="%.4f") for c in summary.columns
                             if c not in ("setting", "seeds", "heads", "stable role")})
st.caption("Test MSE: mean, standard deviation and t interval over seeds. Removable: heads whose single-head ΔMSE "
           "stays under 5 % of the baseline, counted with the interval (its upper bound under 5 %) and by the point "
           "estimate alone; the mean over seeds. Stable role: matched heads with the same role in every seed. ρ: "
           "Spearman rank correlation of matched heads' ΔMSE between seeds, mean over pairs, with its interval from "
           "resampling the heads.")

for name, (title, caption) in tables.ANATOMY_FINDINGS.items():
    found = tables.anatomy_findings(folder.path, name)
    if not found.empty:
        st.subheader(title)
        widgets.table(found, f"study-{chosen}-findings-{name}", f"st_findings_{name}")
        st.caption(caption)

settings_names = list(findings.get("settings", {})) or ["all"]
setting = st.selectbox("Setting", settings_names, key="st_setting") if len(settings_names) > 1 else settings_names[0]
matrix = tables.role_matrix(folder.path, setting)
if matrix.empty:
    st.info("This study has no role analysis (run it with the 'roles' analysis).")
    state.stop_page()


def open_head(row: int, col: int) -> None:
    """Make head `row` of the role matrix, in seed column `col`, the tab's model and site/head, with the study's data;
    the page then switches to the Sparsity explorer."""
    seed = int([c for c in matrix.columns if c.startswith("seed ")][col].split()[1])
    run = next(r for r in plan.runs() if r.seed == seed and (setting == "all" or setting == ", ".join(
        f"{k}={v}" for k, v in r.setting.items())))
    head = int(str(matrix.loc[row, "heads"]).split(";")[col])
    checkpoint = folder.path / "runs" / run.name / "checkpoint"
    state.set_model(state.ModelRef("folder", f"{chosen}/{run.name}", path=str(checkpoint)))
    state.set_data(state.file_data_ref(plan.csv, plan.options))
    st.session_state["sp_site"], st.session_state["sp_head"] = matrix.loc[row, "site"], head
    st.session_state["st_open"] = True


def _open_clicked() -> None:
    picked = tables.role_pick(widgets.clicked(PICK_KEY))
    if picked is not None:
        open_head(*picked)


st.subheader("Heads matched across seeds, and their roles")
codes, labels, seeds, roles, heads = tables.role_grid(matrix)
widgets.clickable_chart(charts.role_figure(codes, labels, seeds, roles, heads,
                                           "Role of each matched head in each seed (click: open that head)"),
                        f"study-{chosen}-roles", PICK_KEY, _open_clicked)
pick = st.columns([2.2, 1, 1.6], vertical_alignment="bottom")
row = pick[0].selectbox("Matched head", range(len(labels)), format_func=lambda i: labels[i], key="st_pick_row")
col = pick[1].selectbox("Seed", range(len(seeds)), format_func=lambda j: seeds[j], key="st_pick_seed")
pick[2].button("Open it on the Sparsity explorer", key="st_open_head", icon=":material/open_in_new:",
               on_click=lambda: open_head(st.session_state["st_pick_row"], st.session_state["st_pick_seed"]))
if st.session_state.pop("st_open", False):
    st.switch_page(SPARSITY_PAGE)
every = matrix[matrix["in_every_seed"]]
st.caption(f"Rows: the first seed's heads; in every other seed, the head matched to it by lag profile (minimal "
           f"summed Jensen–Shannon distance per site). {len(every)} of {len(matrix)} heads keep one role in every "
           f"seed: " + (", ".join(f"{n} × {r}" for r, n in every['role'].value_counts().items()) or "none") + ".")
widgets.table(matrix, f"study-{chosen}-roles", "st_roles_table", height=260)

effects = tables.matched_head_effects(folder.path, matrix)
if len(effects):
    top = effects.head(12)
    widgets.chart(charts.interval_bars(top["head"], top["delta_mse_mean"], top["delta_mse_seeds_lo"],
                                       top["delta_mse_seeds_hi"], "ΔMSE of removing each matched head: mean over "
                                       "seeds, 95 % t interval over seeds", "ΔMSE"),
                  f"study-{chosen}-head-effects", "st_effects")
    widgets.table(effects, f"study-{chosen}-head-effects", "st_effects_table", height=260)
