"""Every screen of the app, opened from the sidebar and put through its main interactions, each timed.

One walk serves the long-input browser test (tests/e2e/test_browser_long.py: nothing may raise on a seq_len-1440
model) and the re-slicing benchmark (benchmarks/reslice.py: how long each action takes). Every action is timed
from the click (the option chosen, the key pressed) to the end of the script run, or fragment run, it started
with what it asked for on screen, plus two animation frames. The clock is the page's own, from the action's first
input event (pointer down, key down), so the driver's checks before its click are not counted; an action without one
(a value filled in) is timed from the driver's call. Kinds:

- first:   a screen opened from the sidebar, to its first result drawn (bar: 5 s at seq_len 1440, 10 s at 5760)
- reslice: a control that changes what a screen shows (bar: 1 s at seq_len 1440, 2 s at 5760)
- run:     a computation started by its own Run button (Compare's 512 windows, a sweep, Integrated Gradients)

After every action the page is checked for an exception box or an error message: `ScreenError` names the
screen, the action and the text. The walk picks options by position, so it fits any model and data with at
least two target columns.
"""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from typing import Callable

# ms: a first computation on a busy two-core machine, the model stack's import included (WALK_TIMEOUT_MS: shorter, to
# find a step that waits for something that never comes)
SLOW = int(os.environ.get("WALK_TIMEOUT_MS", 600_000))
MISSED_MS = 60_000  # a chart click shows its answer within seconds; none after this: the click hit another point
STARTED_MS = 20_000  # an action's run starts within milliseconds; none after this: the action did not land
RESLICE_MS = min(SLOW, 180_000)  # a re-slice that has not finished after this is stuck, not slow (bar: 1 s)

ARM_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  window.__walk = {ran: false, input: null};
  if (!window.__walkInput) {  // the page's clock at the first input event after arming: where the user's wait starts
    window.__walkInput = e => { if (window.__walk && window.__walk.input === null) window.__walk.input = e.timeStamp; };
    for (const kind of ['pointerdown', 'keydown']) document.addEventListener(kind, window.__walkInput, true);
  }
  if (window.__walkObserver) window.__walkObserver.disconnect();
  window.__walkObserver = new MutationObserver(() => { window.__walk.ran = true; });
  window.__walkObserver.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""
# The run the action started has finished (any change of the script state, then idle again), and `want` (if any) is
# in the page's text or a drawn chart's title. While the check against the baselines above every analysis page runs
# (a minute at seq_len 5760), its banner is a fragment polled every second: with a `want` shown, the banner's own
# brief runs do not count as the page still running.
SHOWN_JS = """(want) => {
  const drawn = Array.from(document.querySelectorAll('.js-plotly-plot'))
    .filter(g => g._fullLayout && g.querySelector('.main-svg'));
  return !want || document.querySelector('[data-testid="stMain"]').innerText.includes(want) ||
    drawn.some(g => (g._fullLayout.title.text || '').includes(want));
}"""
FINISHED_JS = """(want) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const shown = (""" + SHOWN_JS + """)(want);
  const banner = document.querySelector('.st-key-model_check');
  const checking = !!want && !!banner && banner.innerText.includes('Checking this model');
  return app && (app.dataset.testScriptState === 'notRunning' || checking) && window.__walk.ran && shown;
}"""
# The armed action's run has started: a change of the script state seen, or the app running now (then marked seen).
RUNNING_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (app && app.dataset.testScriptState === 'running') window.__walk.ran = true;
  return window.__walk.ran;
}"""
IDLE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return app && app.dataset.testScriptState !== 'running';
}"""
# Seconds from the armed action's first input event to now, two frames later, on the page's clock (null: no input
# event seen, e.g. a value typed by `fill`): what the user waits, without the driver's own checks before its click.
WAITED_JS = """() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() =>
  r(window.__walk.input === null ? null : (performance.now() - window.__walk.input) / 1000))))"""
# The page position of data point (x, y) of the plotly chart whose title includes `title` (null: no such chart).
POINT_JS = """([title, x, y]) => {
  const gd = Array.from(document.querySelectorAll('.js-plotly-plot'))
    .find(g => g._fullLayout && (g._fullLayout.title.text || '').includes(title));
  if (!gd) return null;
  gd.scrollIntoView({block: 'center'});
  const fl = gd._fullLayout, box = gd.getBoundingClientRect();
  return [box.left + fl._size.l + fl.xaxis.l2p(fl.xaxis.d2l(x)), box.top + fl._size.t + fl.yaxis.l2p(fl.yaxis.d2l(y))];
}"""
# [x, y] of the `index`-th point of trace `trace` of the chart titled `title`.
TRACE_POINT_JS = """([title, trace, index]) => {
  const gd = Array.from(document.querySelectorAll('.js-plotly-plot'))
    .find(g => g._fullLayout && (g._fullLayout.title.text || '').includes(title));
  if (!gd) return null;
  const t = gd._fullData[trace];
  return [t.x[index], t.y[index]];
}"""
# Arms a wait for the chart titled `title` to finish a restyle done in the browser (its own buttons), then two frames.
RESTYLE_ARM_JS = """(title) => {
  const gd = Array.from(document.querySelectorAll('.js-plotly-plot'))
    .find(g => g._fullLayout && (g._fullLayout.title.text || '').includes(title));
  if (!gd) return false;
  window.__restyled = false;
  gd.once('plotly_restyle', () => requestAnimationFrame(() => requestAnimationFrame(() => {
    window.__restyled = true; })));
  return true;
}"""
PROBLEMS_JS = """() => Array.from(document.querySelectorAll(
    '[data-testid="stException"], [data-testid="stAlertContentError"]')).map(e => e.innerText.slice(0, 600))"""


class ScreenError(AssertionError):
    """A screen raised, or showed an error, during the walk."""


@dataclass(frozen=True)
class Timing:
    screen: str
    action: str
    kind: str  # "first" | "reslice" | "run"
    seconds: float


@dataclass
class Walk:
    """Drives one tab. `times` collects every timed action."""

    page: object
    times: list[Timing] = field(default_factory=list)
    screen: str = ""
    log: Callable[[str], None] | None = None  # told every timing as it is taken

    # ------------------------------------------------------------------------------------ checks
    def check(self, action: str) -> None:
        problems = self.page.evaluate(PROBLEMS_JS)
        if problems:
            raise ScreenError(f"{self.screen}, {action}: {problems[0]}")

    def _finish(self, action: str, kind: str, started: float, want: str | None, timeout: int) -> float:
        try:
            self.page.wait_for_function(FINISHED_JS, arg=want, timeout=timeout, polling=20)
        except Exception:
            self.check(action)  # an exception box explains a missing result better than a timeout
            raise
        waited = self.page.evaluate(WAITED_JS)
        seconds = time.perf_counter() - started if waited is None else waited
        self.times.append(Timing(self.screen, action, kind, seconds))
        if self.log is not None:
            self.log(f"{self.screen}, {action}: {seconds:.2f} s")
        self.check(action)
        return seconds

    # ------------------------------------------------------------------------------------ actions
    def open(self, screen: str, title: str, want: str | None) -> float:
        """The sidebar link to `title`, timed to its first result (`want` shown)."""
        self.screen = screen
        self.page.wait_for_timeout(500)
        link = self.page.get_by_role("link", name=title, exact=True)
        more = self.page.get_by_text(re.compile(r"^View \d+ more$"))  # a long sidebar folds its last pages
        if not link.is_visible() and more.count():
            more.first.click()
            link.wait_for(timeout=SLOW)
        heading = self.page.get_by_role("heading", name=title, level=1)
        self.page.evaluate(ARM_JS)
        before = heading.count() > 0
        started = time.perf_counter()
        link.click()
        heading.wait_for(timeout=SLOW)
        if not before:  # the new page's own run drew its heading: a run whose start and end reached a busy browser in
            self.page.evaluate("() => { window.__walk.ran = true; }")  # one batch changed no script state to watch
        return self._finish("open", "first", started, want, SLOW)

    def act(self, action: str, do: Callable[[], None], want: str | None = None, *, kind: str = "reslice",
            prepare: Callable[[], None] | None = None, timeout: int | None = None,
            landed: Callable[[], bool] | None = None) -> float:
        """`prepare()` (untimed: open a list), then `do()` timed to the end of the run it started, `want` shown
        (within `timeout` ms: RESLICE_MS for a re-slice, SLOW otherwise).

        An action that starts no run within STARTED_MS, or whose target went away before the click (a list closed
        by a rerun that redrew it, seen in CI on a busy machine), is done again, prepare included, and timed from
        its second start — unless what it asked for, absent before the click, is on screen by then: the click
        landed and its run came and went unseen (a server busy for seconds on a loaded machine), so doing it again
        would wait for a run that never comes; it is timed from the first start. `landed()` says the same of a
        control whose own state shows the click took (an option shown as chosen, a radio checked, a tab selected)
        where `want` was on screen before: a quick fragment run whose start and end reach a busy browser in one batch
        never changes the script state the walk watches, and clicking the same option again changes nothing."""
        timeout = timeout or (RESLICE_MS if kind == "reslice" else SLOW)
        for attempt in range(2):
            self.page.wait_for_timeout(600)
            self._idle()
            if prepare is not None:
                prepare()
                self.page.wait_for_timeout(300)
            self.page.evaluate(ARM_JS)
            before = bool(want) and self.page.evaluate(SHOWN_JS, want)
            started = time.perf_counter()
            try:
                do()
            except Exception as err:  # playwright's TimeoutError: what it was to click is gone
                if attempt == 1:
                    raise
                if self.log is not None:
                    self.log(f"{self.screen}, {action}: {type(err).__name__} before the click landed; again")
                continue
            if attempt == 1 or self._started():
                break
            if (want and not before and self.page.evaluate(SHOWN_JS, want)) or (landed is not None and landed()):
                self.page.evaluate("() => { window.__walk.ran = true; }")  # landed: its run was not seen
                if self.log is not None:
                    self.log(f"{self.screen}, {action}: its run was not seen, but what it asked for is shown")
                break
            if self.log is not None:
                self.log(f"{self.screen}, {action}: no run started within {STARTED_MS / 1000:g} s; again")
        return self._finish(action, kind, started, want, timeout)

    def _started(self) -> bool:
        """Whether the armed action started a script or fragment run within STARTED_MS. A click that lands while
        another run is still going (a page still computing on a busy machine) changes no attribute, the app being
        'running' already: that run takes the change up, so a running app counts as started."""
        try:
            self.page.wait_for_function(RUNNING_JS, timeout=STARTED_MS, polling=20)
            return True
        except Exception:
            return False

    def _idle(self) -> None:
        """Waits (up to STARTED_MS) for the app to finish what it is running, so that an action starts a run of
        its own; a page that polls all the time is taken as it is."""
        try:
            self.page.wait_for_function(IDLE_JS, timeout=STARTED_MS, polling=50)
        except Exception:
            pass

    def choose(self, action: str, label: str, index: int, want: str | None = None) -> float:
        """Option `index` of the selectbox labelled `label` (the next one when that is already chosen), timed from
        the click that picks it."""
        box = self.page.locator('[data-testid="stSelectbox"]').filter(
            has=self.page.get_by_text(label, exact=True)).first
        box.scroll_into_view_if_needed()
        current = box.get_by_role("combobox").input_value() or box.inner_text()
        box.get_by_role("combobox").click()
        options = self.page.get_by_role("option")
        options.first.wait_for(timeout=SLOW)
        texts = options.all_inner_texts()
        pick = index % len(texts)
        if texts[pick].strip() in current:
            pick = (pick + 1) % len(texts)
        self.page.keyboard.press("Escape")

        chosen = texts[pick].strip()

        def open_list() -> None:  # (again, if the first pick landed nowhere)
            box.get_by_role("combobox").click()
            options.nth(pick).wait_for(timeout=SLOW)

        def shows_it() -> bool:
            return chosen in (box.get_by_role("combobox").input_value() or box.inner_text())
        return self.act(action, options.nth(pick).click, want, prepare=open_list, landed=shows_it)

    def radio(self, action: str, option: str, want: str | None = None, *, kind: str = "reslice",
              in_form: bool = False) -> float | None:
        """Pick a radio option; None (nothing timed) when it is already picked or sits in a form (neither starts a
        run: a form's widgets wait for its submit button)."""
        radio = self.page.get_by_role("radio", name=option, exact=True).first
        if radio.is_checked():
            return None
        label = self.page.locator("label").filter(has=radio).first
        if in_form:
            label.scroll_into_view_if_needed()
            label.click()
            return None
        label.scroll_into_view_if_needed()
        return self.act(action, label.click, want, kind=kind, landed=radio.is_checked)

    def slider(self, action: str, label: str, want: str | None = None, key: str = "ArrowRight", *,
               kind: str = "reslice") -> float:
        thumb = self.page.locator('[data-testid="stSlider"]').filter(has_text=label).get_by_role("slider").first
        thumb.scroll_into_view_if_needed()
        thumb.focus()
        return self.act(action, lambda: thumb.press(key), want, kind=kind)

    def button(self, action: str, name: str, want: str | None, *, kind: str = "run") -> float:
        button = self.page.get_by_role("button", name=name, exact=True).first
        button.scroll_into_view_if_needed()
        return self.act(action, button.click, want, kind=kind)

    def tab(self, action: str, name: str, want: str | None) -> float:
        tab = self.page.get_by_role("tab", name=name).first
        return self.act(action, tab.click, want, landed=lambda: tab.get_attribute("aria-selected") == "true")

    def number(self, action: str, label: str, value, want: str | None = None) -> float:
        """The number field labelled `label` set to `value`, typed and entered inside the timed action, so that the
        run it starts is seen whenever the field takes the value (on Enter or before it). A field that holds
        `value` already (a try whose run went unseen) is first moved off it, untimed: setting it is then a change."""
        field = self.page.get_by_role("spinbutton", name=label, exact=True).first
        field.scroll_into_view_if_needed()

        def off_it() -> None:
            if field.input_value() == str(value):
                field.fill(str(value + 1))
                field.press("Enter")
                self.page.wait_for_timeout(600)
                self._idle()

        def enter() -> None:
            field.fill(str(value))
            field.press("Enter")
        return self.act(action, enter, want, prepare=off_it)

    def checkbox(self, action: str, name: str, want: str | None, *, exact: bool = True,
                 kind: str = "reslice") -> float:
        """A checkbox or a toggle (named whole, or by the start of its label with exact=False)."""
        tick = self.page.get_by_role("checkbox", name=name, exact=exact).or_(
            self.page.get_by_role("switch", name=name, exact=exact)).first  # st.toggle is a switch
        box = self.page.locator("label").filter(has=tick).first
        box.scroll_into_view_if_needed()
        was = tick.is_checked()

        def flip() -> None:  # once: a second try finds it flipped already
            if tick.is_checked() == was:
                box.click()
        return self.act(action, flip, want, kind=kind)

    def chart_button(self, action: str, title: str, label: str) -> float:
        """A button of the chart titled `title` (plotly's own, answered in the browser): timed from the click to the
        end of the restyle it starts, two frames after. Fails if the click ran the script."""
        self.page.wait_for_timeout(600)
        if not self.page.evaluate(RESTYLE_ARM_JS, title):
            raise ScreenError(f"{self.screen}, {action}: no chart titled {title!r}")
        self.page.evaluate(ARM_JS)
        button = self.page.locator(".js-plotly-plot .updatemenu-button").filter(has_text=label).first
        started = time.perf_counter()
        button.click()
        self.page.wait_for_function("() => window.__restyled", timeout=SLOW, polling=20)
        seconds = time.perf_counter() - started
        if self.page.evaluate("() => window.__walk.ran"):
            raise ScreenError(f"{self.screen}, {action}: the chart's button reran the script")
        self.times.append(Timing(self.screen, action, "reslice", seconds))
        if self.log is not None:
            self.log(f"{self.screen}, {action}: {seconds:.2f} s")
        self.check(action)
        return seconds

    def click_point(self, action: str, title: str, x, y, want: str | None) -> float:
        """A click on data point (x, y) of the chart titled `title`.

        A click that started a run but not the one asked for (the chart moved under the pointer while a rerun redrew
        the page: seen on a loaded machine as a ten-minute wait for the wanted text) is aimed again and repeated once,
        and timed from the second click."""
        for attempt in range(2):
            at = self.page.evaluate(POINT_JS, [title, x, y])
            if at is None:
                raise ScreenError(f"{self.screen}, {action}: no chart titled {title!r}")

            def prepare(at=at) -> None:
                self.page.mouse.move(at[0] + 1, at[1] + 1)
            try:
                return self.act(action, lambda at=at: self.page.mouse.click(at[0] + 1, at[1] + 1), want,
                                prepare=prepare, timeout=MISSED_MS if attempt == 0 and want else SLOW)
            except ScreenError:
                raise
            except Exception:
                if attempt == 1 or not want:
                    raise
                if self.log is not None:
                    self.log(f"{self.screen}, {action}: {want!r} not shown {MISSED_MS / 1000:g} s after the click; "
                             "aimed and clicked again")
        raise AssertionError("unreachable")

    def trace_point(self, title: str, trace: int, index: int):
        return self.page.evaluate(TRACE_POINT_JS, [title, trace, index])


# ------------------------------------------------------------------------------------------ the screens
def data_model(w: Walk) -> None:
    w.open("data & model", "Data & model", "Active model")


def forecast(w: Walk) -> None:
    w.open("forecast", "Forecast", "-step forecast")
    w.choose("column", "Plotted column", 1, "-step forecast")
    w.slider("history", "History shown", "-step forecast")
    if w.page.get_by_role("button", name="Score on the test split").count():  # a long test split waits for it
        w.radio("test windows", "first 512", None)
        w.button("score 512 test windows", "Score on the test split", "best naive forecast")


def compare(w: Walk, windows: str = "first 512") -> None:
    w.open("compare", "Compare", "Run comparison")
    if w.page.get_by_text("ε (counterfactual gap)").count():
        raise ScreenError("compare: results drawn before Run comparison was pressed")
    w.radio("windows", windows, None, in_form=True)
    w.button("run 512 windows", "Run comparison", "ε (counterfactual gap)")
    w.radio("metric", "MAE", "MAE (standardised)")
    w.slider("window", "Window (0", "window 1, history")
    w.choose("column", "Column", 1, "window 1, history")


def head_masking(w: Walk) -> None:
    w.open("head masking", "Head masking", "forecast with and without the mask")
    w.checkbox("head off", "encoder.0.0:1", "Off (1 of")
    w.slider("window", "Window (0", "Window 1 of the test split")
    w.choose("column", "Plotted column", 1, "forecast with and without the mask")


SPARSITY_GRID = "Mean row entropy"


def sparsity(w: Walk) -> None:
    w.open("sparsity", "Sparsity explorer", SPARSITY_GRID)
    for head, row, name in ((1, 0, "encoder.0.0:1"), (2, 1, "encoder.0.1:2"),
                            (3, 0, "encoder.0.0:3")):
        w.click_point("grid click", SPARSITY_GRID, head, row, name)
    w.tab("tab: attention rows", "Attention rows", "Lazy queries")
    w.tab("tab: exact vs sampled", "Exact vs sampled", "Top-u agreement at")
    w.tab("tab: scores", "Scores and selected queries", "Selected queries of this head")
    w.radio("score", "exact M (log-sum-exp − mean)", "exact M per query")
    w.slider("window", "Window (0", "Window 1 of the test split")


def pyramid(w: Walk) -> None:
    w.open("pyramid", "Distilling pyramid", "The encoder pyramid")
    w.slider("position", "Position (0", "position 1 tiles")
    w.slider("window", "Window (0", "Window 1 of the test split")
    w.tab("tab: survival", "Max-pool survival", "Max-pool survival: fraction")
    w.tab("tab: attention rows", "Attention rows per encoder layer", "Softmax rows of head 0")
    w.choose("rows: head", "Head", 2, "Softmax rows of head 2")
    w.slider("window, rows open", "Window (0", "Window 2 of the test split")


ANATOMY = "Rollout through the pyramid"


def anatomy(w: Walk) -> None:
    w.open("anatomy", "Anatomy", "The three forms of P")
    w.choose("step", "Forecast step", 1, "(step 1, P")
    w.radio("P form", "structural", "P structural")
    w.radio("P form: jacobian", "jacobian", "P jacobian")
    w.slider("alpha", "α (attention's share)", "α = 0.55")
    w.choose("head", "Head", 2, "Window 0 of the test split")
    w.slider("window", "Window (0", "Window 1 of the test split")
    w.tab("tab: forecast lens", "Forecast lens", "what each layer would forecast")
    w.tab("tab: direct shares", "Direct shares", "direct share of the forecast")


def features(w: Walk) -> None:
    w.open("features", "Features", "Train the dictionary")
    w.number("expansion", "Expansion", 1, None)  # d_model features: each is ablated on the test windows
    w.number("steps", "Steps", 100, None)
    w.button("train (100 steps)", "Train the dictionary", "One row per feature")
    w.act("tab: feature", w.page.get_by_role("tab", name="Feature", exact=True).first.click, "Where it fires most")
    w.number("feature", "Feature", 1, "Feature 1")
    # the causal check runs forward passes over 64 test windows with the feature scaled (off until asked for on long
    # windows): a computation, timed as a run, each scale its own
    w.checkbox("measure it", "Measure it: the forecast with the feature scaled", "Feature 1's effect on the forecast",
               exact=False, kind="run")
    w.slider("scale", "Feature ×", "With the feature scaled by 0.5", kind="run")
    w.act("tab: concepts", w.page.get_by_role("tab", name="Concepts", exact=True).first.click,
          "Upload a concept file above")


def circuits(w: Walk) -> None:
    w.open("circuits", "Circuits", "Q-composition")
    w.radio("composition: K", "K: into its keys", "K-composition")
    w.tab("tab: attribution patching", "Attribution patching", "AtP needs one forward")


def ablation(w: Walk) -> None:
    w.open("ablation", "Ablation studies", "Run single-head sweep")
    w.radio("windows", "32", "32 of")
    w.button("run sweep (32 windows)", "Run single-head sweep", "Baseline MSE (all heads on)")
    w.choose("sweep head", "Head (most harmful first)", 2, "ΔMSE per horizon step:")


def attribution(w: Walk) -> None:
    w.open("attribution", "Attribution", "Path points (n_steps)")
    w.page.get_by_role("spinbutton", name="Path points (n_steps)").fill("16")
    w.button("run (16 path points)", "Run", "Convergence delta")


QK_TITLE = "queries and keys of"


def qk_map(w: Walk) -> None:
    w.open("query/key map", "Query/key map", QK_TITLE)
    w.chart_button("colour", QK_TITLE, "hour of day")
    x, y = w.trace_point(QK_TITLE, 2, 0)  # the first ringed (selected) query: its row was computed
    w.click_point("point click", QK_TITLE, x, y, "Attention row of query")


def counterfactual(w: Walk) -> None:
    w.open("counterfactual", "Counterfactual editor", "as it is and edited")
    w.choose("edit: spike", "Edit", 1, "spike:t=")
    w.number("edit size", "size", 4.5, "size=4.5")
    w.slider("window", "Window (0", "window 1, as it is")
    w.choose("head", "Head (most moved first)", 1, "M̄ per query, as it is and edited")


def patching(w: Walk) -> None:
    w.open("patching", "Activation patching", "Share of the forecast difference restored")
    w.slider("window A", "Window (0", "A: window 1;")
    w.choose("patch", "Patch", 2, "A, B and B patched")


def variants(w: Walk) -> None:
    w.open("variants", "Attention variants", "Run every kind")
    w.number("windows", "Windows", 8, None)
    w.button("run every kind (8 windows)", "Run every kind", "The model's own attention")


def studies(w: Walk) -> None:
    w.open("studies", "Studies", None)


SCREENS: dict[str, Callable[[Walk], None]] = {
    "data": data_model, "forecast": forecast, "compare": compare, "masking": head_masking, "sparsity": sparsity,
    "pyramid": pyramid, "anatomy": anatomy, "features": features, "ablation": ablation, "attribution": attribution, "qk_map": qk_map,
    "counterfactual": counterfactual, "patching": patching, "circuits": circuits, "variants": variants, "studies": studies}


def upload(page, csv_path, timeout: int = SLOW) -> None:
    """Make `csv_path` the tab's data through the Data & model page's uploader (tried again if the first file set
    before the uploader had hydrated went nowhere)."""
    page.get_by_text("Upload a CSV", exact=True).click()
    uploader = page.locator('[data-testid="stMain"] [data-testid="stFileUploader"]').first  # the data's, above
    uploader.wait_for(timeout=timeout)
    page.wait_for_timeout(1000)
    for attempt in range(3):
        uploader.locator('input[type="file"]').set_input_files(str(csv_path), timeout=timeout)
        try:
            page.get_by_text("the bundled sample stays active").wait_for(state="detached", timeout=60_000)
            break
        except Exception:
            if attempt == 2:
                raise
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(timeout=timeout)


def untrained_model(csv_path, folder, seq_len: int, *, label_len: int | None = None, pred_len: int = 96,
                    target: str | None = None) -> None:
    """A seeded, untrained Informer for `csv_path` at `seq_len` saved in `folder` (d_model 32, 4 heads, 3 encoder
    layers, d_ff 64: the long-input model; training is not what the walk exercises)."""
    import torch

    from informer_lab.analysis.checkpoints.folder import DataSchema, save_checkpoint
    from informer_lab.analysis.data import DataSpec, load_csv, prepare
    from informer_lab.analysis.learning.training import config_for
    from informer_lab.model import Informer

    frame = load_csv(csv_path)
    prepared = prepare(frame, DataSpec(target=target or list(frame.values.columns)[-1], features="M",
                                       seq_len=seq_len, label_len=label_len or seq_len // 5, pred_len=pred_len))
    torch.manual_seed(0)
    model = Informer(config_for(prepared, d_model=32, n_heads=4, e_layers=(3,), d_layers=1, d_ff=64,
                                dropout=0.0)).eval()
    save_checkpoint(folder, model, DataSchema.of(prepared, frame.datetime_column), {"note": "untrained"})
