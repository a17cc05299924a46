"""What a study runs: the seeds, a grid of settings, and one RunSpec per (seed, setting).

    --seeds 0-7            seeds 0, 1, …, 7          --seeds 0,3,9     those three
    --grid attention=prob,full factor=3,5            every combination: 4 settings × the seeds

Grid keys are the `train` command's options (their names with _ for -), values parsed as the option's type. A run's
folder is named by its seed and settings (`seed3-attention=full-factor=5`), so the same plan always names the same
folders and a re-run finds what was finished.
"""
from __future__ import annotations

import hashlib
import itertools
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from informer_lab.analysis.data import DataSpec, ReadOptions
from informer_lab.analysis import jsonfile
from informer_lab.analysis.errors import ConfigError
from informer_lab.analysis.seeds import format_seeds, parse_seeds as _parse_seeds  # noqa: F401 (format_seeds: the UI's)
from informer_lab.analysis.learning.embedding import EMBEDDINGS
from informer_lab.analysis.learning.unit_root import UNIT_ROOTS
from informer_lab.analysis.learning.settings import ModelSize, TrainSettings

ANALYSES = ("errors", "sweep", "importance", "agreement", "roles", "lens", "shares", "composition", "features")
# what a study runs unless told: every analysis but `features` (a dictionary trained per run: tens of seconds each)
DEFAULT_ANALYSES = tuple(a for a in ANALYSES if a != "features")
# grid key → (where it goes, its type): the train options a study may vary
def on_off(text: str) -> bool:
    """'on' / 'off' (also true / false, yes / no, 1 / 0) → bool."""
    value = {"on": True, "true": True, "yes": True, "1": True, "off": False, "false": False, "no": False,
             "0": False}.get(str(text).strip().lower())
    if value is None:
        raise ValueError(text)
    return value


on_off.__name__ = "on/off"


def _shown(value) -> str:
    """A grid value in a run's name: on / off for a switch."""
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


def _size(stored: dict) -> dict:
    """ModelSize's fields of a stored plan; a plan written before the model's size named its embedding trained the
    conv one, and its runs still do."""
    size = {"embedding": "conv", **stored}
    size["e_layers"] = tuple(size["e_layers"])
    return size


def _train(stored: dict) -> TrainSettings:
    """TrainSettings of a stored plan; a plan written before the weights' moving average kept the last step's
    weights, and its runs still do."""
    return TrainSettings(**{"average": 0.0, **stored})


GRID_KEYS = {"attention": ("size", str), "factor": ("size", int), "d_model": ("size", int), "n_heads": ("size", int),
             "d_ff": ("size", int), "e_layers": ("size", str), "d_layers": ("size", int), "dropout": ("size", float),
             "seq_len": ("spec", int), "label_len": ("spec", int), "pred_len": ("spec", int),
             "features": ("spec", str), "learning_rate": ("train", float), "batch_size": ("train", int),
             "epochs": ("train", int), "revin": ("size", on_off), "embedding": ("size", str),
             "unit_roots": ("size", str)}
MAX_RUNS = 2000  # status.json, the run table and the Studies screen are measured at 200 runs


def parse_seeds(text: str, limit: int = None) -> tuple[int, ...]:
    """'0-7' → (0, …, 7); '0,3,9' → (0, 3, 9); '2-4,8' → (2, 3, 4, 8), at most MAX_RUNS (analysis.seeds)."""
    return _parse_seeds(text, MAX_RUNS if limit is None else limit)


def parse_grid(items: list[str] | tuple[str, ...]) -> dict[str, tuple]:
    """['attention=prob,full', 'factor=3,5'] → {'attention': ('prob', 'full'), 'factor': (3, 5)}."""
    grid: dict[str, tuple] = {}
    for item in items or ():
        if "=" not in item:
            raise ConfigError(f"a --grid item is key=value,value…, got {item!r}")
        key, values = item.split("=", 1)
        key = key.strip().replace("-", "_")
        if key not in GRID_KEYS:
            raise ConfigError(f"--grid cannot vary {key!r}; it varies {', '.join(sorted(GRID_KEYS))}")
        kind = GRID_KEYS[key][1]
        try:
            parsed = tuple(kind(v.strip()) for v in values.split(",") if v.strip())
        except ValueError:
            raise ConfigError(f"--grid {key} takes {kind.__name__} values, got {values!r}") from None
        if not parsed:
            raise ConfigError(f"--grid {key} has no values")
        if key == "attention":
            _attention_kinds(parsed)
        if key == "embedding" and not set(parsed) <= set(EMBEDDINGS):
            raise ConfigError(f"--grid embedding takes {', '.join(EMBEDDINGS)}, got {values!r}")
        if key == "unit_roots" and not set(parsed) <= set(UNIT_ROOTS):
            raise ConfigError(f"--grid unit_roots takes {', '.join(UNIT_ROOTS)}, got {values!r}")
        grid[key] = parsed
    return grid


def _attention_kinds(kinds: tuple[str, ...]) -> None:
    """Refuses a --grid attention value that is not a kind the model has (the model stack is imported only here, so
    that reading a plan stays torch-free)."""
    from informer_lab.model.config import ATTENTION_KINDS

    if not set(kinds) <= set(ATTENTION_KINDS):
        bad = sorted(set(kinds) - set(ATTENTION_KINDS))[0]
        raise ConfigError(f"--grid attention: {bad[:40]!r} is not an attention kind; kinds: "
                          f"{', '.join(ATTENTION_KINDS)}")


@dataclass(frozen=True)
class RunSpec:
    """One run of a study: its folder name, seed, the grid values it takes, and what it trains."""

    name: str
    seed: int
    setting: dict
    spec: DataSpec
    size: ModelSize
    train: TrainSettings

    def to_dict(self) -> dict:
        return {"name": self.name, "seed": self.seed, "setting": self.setting, "spec": asdict(self.spec),
                "size": asdict(self.size), "train": asdict(self.train)}

    @classmethod
    def from_dict(cls, data: dict) -> "RunSpec":
        size = _size(data["size"])
        return cls(data["name"], int(data["seed"]), dict(data["setting"]), DataSpec(**data["spec"]),
                   ModelSize(**size), _train(data["train"]))


@dataclass(frozen=True)
class StudyPlan:
    """A whole study: the CSV (its path and fingerprint), how to read it, the base settings, seeds and grid."""

    csv: str
    fingerprint: str
    options: ReadOptions
    spec: DataSpec
    size: ModelSize
    train: TrainSettings
    seeds: tuple[int, ...]
    grid: dict = field(default_factory=dict)
    analyses: tuple[str, ...] = DEFAULT_ANALYSES
    max_windows: int = 512  # windows each analysis scores (strided through the split); None-like 0: all
    split: str = "test"

    def runs(self) -> list[RunSpec]:
        keys = sorted(self.grid)
        count = len(self.seeds) * math.prod(len(self.grid[k]) for k in keys)
        if count > MAX_RUNS:
            raise ConfigError(f"the study has {count:,} runs (seeds × grid); at most {MAX_RUNS}")
        combos = list(itertools.product(*(self.grid[k] for k in keys))) or [()]
        out = []
        for combo in combos:
            setting = dict(zip(keys, combo))
            spec, size, train = self.spec, self.size, self.train
            for key, value in setting.items():
                where = GRID_KEYS[key][0]
                if key == "attention":
                    size = replace(size, encoder_attention=value, decoder_attention=value)
                elif key == "e_layers":
                    size = replace(size, e_layers=tuple(int(x) for x in str(value).split(":")))
                elif where == "size":
                    size = replace(size, **{key: value})
                elif where == "spec":
                    spec = replace(spec, **{key: value})
                else:
                    train = replace(train, **{key: value})
            if "revin" in setting and size.embedding == "auto":
                raise ConfigError("--grid revin with the embedding auto: auto turns RevIN on wherever the lags "
                                  "embedding does not fit, so revin=off would not be off; give --embedding conv "
                                  "(or lags) or --grid embedding=conv,…")
            for seed in self.seeds:
                name = "-".join([f"seed{seed}"] + [f"{k}={_shown(v)}" for k, v in setting.items()])
                out.append(RunSpec(name, seed, setting, spec, size, replace(train, seed=seed)))
        return out

    def to_dict(self) -> dict:
        return {"csv": self.csv, "fingerprint": self.fingerprint, "options": asdict(self.options),
                "spec": asdict(self.spec), "size": asdict(self.size), "train": asdict(self.train),
                "seeds": list(self.seeds), "grid": {k: list(v) for k, v in self.grid.items()},
                "analyses": list(self.analyses), "max_windows": self.max_windows, "split": self.split}

    @classmethod
    def from_dict(cls, data: dict) -> "StudyPlan":
        size = _size(data["size"])
        return cls(data["csv"], data["fingerprint"], ReadOptions(**data["options"]), DataSpec(**data["spec"]),
                   ModelSize(**size), _train(data["train"]), tuple(data["seeds"]),
                   {k: tuple(v) for k, v in data["grid"].items()}, tuple(data["analyses"]), int(data["max_windows"]),
                   data.get("split", "test"))


def fingerprint(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_plan(folder: Path) -> StudyPlan | None:
    """The plan in folder/study.json; None when there is none; ConfigError naming the file when it is damaged."""
    path = Path(folder) / "study.json"
    if not path.is_file():
        return None
    try:
        data = jsonfile.read(path, max_bytes=16 << 20)
    except jsonfile.JsonError as err:
        raise ConfigError(f"{path} is damaged ({str(err)[:100]}); move the folder aside or choose another --out") \
            from None
    try:
        return StudyPlan.from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise ConfigError(f"{path} is damaged (not a study plan: {type(err).__name__} {str(err)[:60]}); move the "
                          "folder aside or choose another --out") from None


__all__ = ["ANALYSES", "DEFAULT_ANALYSES", "GRID_KEYS", "MAX_RUNS", "RunSpec", "StudyPlan", "fingerprint", "format_seeds", "parse_grid",
           "parse_seeds", "read_plan"]
