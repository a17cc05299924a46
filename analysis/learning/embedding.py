"""Which input embedding a model gets: the paper's, or the lags embedding with the data's season.

`ModelSize.embedding`:

    "conv"  the paper's DataEmbedding (a Conv1d over the window's values, the sinusoid, a Linear of the time features);
            the decoder reads label_len known rows, then pred_len zeros.
    "lags"  model/lags.py: each step embedded from its own value and the value one season back (the smallest multiple
            of the frequency's season that is ≥ pred_len, so the decoder's forecast steps read a value the window
            holds); the first `lag` rows of the window only feed lags. The forecast steps' own values, unknown,
            repeat the window's last value (placeholders="last"; HF's zeros read the window's level as −loc/scale).
    "auto"  (the lab's default) "lags" where the data has a season: its lag inside the window where it takes at
            most half of it (`seasonal_lag`), else in rows put before the window (`lag_history`: 15-minute data at
            seq_len 96 gets windows of 192 rows, the encoder reading the last 96); "conv" with RevIN (model/revin.py)
            where the data has no season or the file is too short for the longer windows; the plain "conv" where
            RevIN is asked for or an encoder stack of several replicas.

Each window is standardised by its own mean and deviation over the encoder's positions (instance_scaling "std",
as Hugging Face's Informer), the forecast mapped back. Measured (benchmarks/defaults.py, docs/measurements.md): on
planted hourly series whose best forecast reads y[t − 24], the conv embedding stays 1.14–1.42× the Bayes MSE and
behind seasonal naive; to copy one step a day back it must put nearly all of a softmax row on one position, and a
blurred row adds the neighbours' noise. The lags embedding hands that value to the forecast step itself: 1.02–1.03×,
better than seasonal naive, within 1–2 % of the linear baseline. "conv" without RevIN is the paper's
(`--paper-recipe`).

Plain values, no torch: the screens say what "auto" chooses before anything is trained.
"""
from __future__ import annotations

EMBEDDINGS = ("auto", "conv", "lags")
MAX_HISTORY_SHARE = 0.5  # the lag may take at most half the window: the encoder keeps ≥ seq_len / 2 positions
MAX_HISTORY_WINDOWS = 2  # "auto" lengthens a window by at most twice seq_len to hold a longer lag


def season_lag(freq: str | None, pred_len: int) -> int | None:
    """The smallest multiple of the season of `freq` (hourly 24, daily 7, 15-minute 96, …) that is ≥ pred_len; None
    when the data has no obvious season."""
    if not freq:
        return None
    from informer_lab.analysis.data.calendar import seasonal_period

    try:
        season = seasonal_period(freq)
    except ValueError:
        return None
    if not season:
        return None
    return season * -(-pred_len // season)


def seasonal_lag(freq: str | None, seq_len: int, pred_len: int) -> int | None:
    """The lag the lags embedding reads (`season_lag`) when it is at most half of seq_len; None when the data has no
    obvious season or the lag does not fit (15-minute data at seq_len 96: a day is the whole window)."""
    lag = season_lag(freq, pred_len)
    return lag if lag is not None and lag <= MAX_HISTORY_SHARE * seq_len else None


def lag_history(choice: str, freq: str | None, seq_len: int, pred_len: int, *, revin: bool = False,
                replicas: int = 1) -> int:
    """Rows "auto" puts before each window so that the lags embedding has its lag where the lag would take more than
    half of seq_len (15-minute data at seq_len 96: 96 rows, the window 192, the encoder still reading 96 positions);
    0 where nothing is added (another choice, RevIN, an encoder stack, no season, the lag fits, or a lag of more
    than MAX_HISTORY_WINDOWS windows)."""
    if choice != "auto" or revin or replicas > 1 or seasonal_lag(freq, seq_len, pred_len) is not None:
        return 0
    lag = season_lag(freq, pred_len)
    return lag if lag is not None and lag <= MAX_HISTORY_WINDOWS * seq_len else 0


def embedding_fields(choice: str, freq: str | None, seq_len: int, pred_len: int, *, revin: bool = False,
                     replicas: int = 1) -> dict:
    """The InformerConfig fields of an embedding choice ("auto", "conv" or "lags") for data of step `freq`.
    "auto" with RevIN or an encoder stack of several replicas is "conv" (RevIN scales the windows itself; the lags
    embedding feeds one replica); "auto" where the season's lag does not fit is "conv" with RevIN. Raises ValueError
    for "lags" where it cannot be, naming why."""
    if choice not in EMBEDDINGS:
        raise ValueError(f"embedding must be one of {', '.join(EMBEDDINGS)}, got {choice!r}")
    if choice == "conv" or (choice == "auto" and (revin or replicas > 1)):
        return {"embedding": "conv"}
    if replicas > 1:
        raise ValueError("the lags embedding feeds one encoder replica; give one number of encoder layers or the "
                         "conv embedding")
    lag = seasonal_lag(freq, seq_len, pred_len)
    if lag is None:
        if choice == "auto":
            return {"embedding": "conv", "revin": True}
        raise ValueError(f"the lags embedding needs a season of the data's step ({freq or 'unknown'}) whose first "
                         f"multiple ≥ pred_len {pred_len} is at most half of seq_len {seq_len}; give a longer "
                         "seq_len, a shorter pred_len or the conv embedding")
    if revin:
        raise ValueError("RevIN needs the conv embedding; the lags embedding standardises each window itself")
    return {"embedding": "lags", "lags": (0, lag), "instance_scaling": "std", "placeholders": "last"}


def describe_embedding(fields: dict) -> str:
    """A few words for a screen: "lags (0, 24): each step with its value 24 steps back" or "conv (the paper's)"."""
    if fields.get("embedding") == "lags":
        back = sorted(lag for lag in fields["lags"] if lag)
        values = f"value {back[0]} steps" if len(back) == 1 else f"values {', '.join(map(str, back))} steps"
        return f"lags {tuple(fields['lags'])}: each step with its {values} back"
    return "conv with RevIN" if fields.get("revin") else "conv (the paper's)"


def placeholder_values(fields: dict) -> str:
    """What the decoder's forecast steps hold as values, in a few words for a screen (InformerConfig.placeholders)."""
    if fields.get("embedding") != "lags":
        return "zeros"
    if fields.get("placeholders") == "last":
        return "the window's last value"
    return "zeros (−loc/scale once each window is scaled)"


def withheld_columns(level_free, columns) -> list[str]:
    """The names of the input channels whose level a lags model does not read (InformerConfig.level_free)."""
    return [columns[i] for i in level_free or () if i < len(columns)]


def describe_withheld(level_free, columns) -> str:
    """"levels withheld (a unit root in the training split): walk" for a screen or the console; "" for none."""
    names = withheld_columns(level_free, columns)
    return f"levels withheld (a unit root in the training split): {', '.join(names)}" if names else ""
