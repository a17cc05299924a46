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
import json
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from analysis.data import DataSpec, ReadOptions
from analysis.errors import ConfigError
from analysis.training import TrainSettings
from analysis.workflow import ModelSize

ANALYSES = ("errors", "sweep", "importance", "agreement", "roles")
# grid key → (where it goes, its type): the train options a study may vary
GRID_KEYS = {"attention": ("size", str), "factor": ("size", int), "d_model": ("size", int), "n_heads": ("size", int),
             "d_ff": ("size", int), "e_layers": ("size", str), "d_layers": ("size", int), "dropout": ("size", float),
             "seq_len": ("spec", int), "label_len": ("spec", int), "pred_len": ("spec", int),
             "features": ("spec", str), "learning_rate": ("train", float), "batch_size": ("train", int),
             "epochs": ("train", int)}
MAX_RUNS = 512


def parse_seeds(text: str) -> tuple[int, ...]:
    """'0-7' → (0, …, 7); '0,3,9' → (0, 3, 9); '2-4,8' → (2, 3, 4, 8)."""
    seeds: list[int] = []
    for part in str(text).replace(" ", "").split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise ConfigError(f"--seeds takes numbers and ranges such as 0-7 or 0,3,9, got {text!r}")
        a, b = int(m.group(1)), int(m.group(2) or m.group(1))
        if b < a:
            raise ConfigError(f"--seeds range {part!r} runs backwards")
        seeds.extend(range(a, b + 1))
    if not seeds or len(set(seeds)) != len(seeds):
        raise ConfigError(f"--seeds must name distinct seeds, got {text!r}")
    return tuple(seeds)


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
        grid[key] = parsed
    return grid


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
        size = dict(data["size"])
        size["e_layers"] = tuple(size["e_layers"])
        return cls(data["name"], int(data["seed"]), dict(data["setting"]), DataSpec(**data["spec"]),
                   ModelSize(**size), TrainSettings(**data["train"]))


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
    analyses: tuple[str, ...] = ANALYSES
    max_windows: int = 512  # windows each analysis scores (strided through the split); None-like 0: all
    split: str = "test"

    def runs(self) -> list[RunSpec]:
        keys = sorted(self.grid)
        combos = list(itertools.product(*(self.grid[k] for k in keys))) or [()]
        if len(combos) * len(self.seeds) > MAX_RUNS:
            raise ConfigError(f"the study has {len(combos) * len(self.seeds)} runs; at most {MAX_RUNS}")
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
            for seed in self.seeds:
                name = "-".join([f"seed{seed}"] + [f"{k}={v}" for k, v in setting.items()])
                out.append(RunSpec(name, seed, setting, spec, size, replace(train, seed=seed)))
        return out

    def to_dict(self) -> dict:
        return {"csv": self.csv, "fingerprint": self.fingerprint, "options": asdict(self.options),
                "spec": asdict(self.spec), "size": asdict(self.size), "train": asdict(self.train),
                "seeds": list(self.seeds), "grid": {k: list(v) for k, v in self.grid.items()},
                "analyses": list(self.analyses), "max_windows": self.max_windows, "split": self.split}

    @classmethod
    def from_dict(cls, data: dict) -> "StudyPlan":
        size = dict(data["size"])
        size["e_layers"] = tuple(size["e_layers"])
        return cls(data["csv"], data["fingerprint"], ReadOptions(**data["options"]), DataSpec(**data["spec"]),
                   ModelSize(**size), TrainSettings(**data["train"]), tuple(data["seeds"]),
                   {k: tuple(v) for k, v in data["grid"].items()}, tuple(data["analyses"]), int(data["max_windows"]),
                   data.get("split", "test"))


def fingerprint(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_plan(folder: Path) -> StudyPlan | None:
    path = Path(folder) / "study.json"
    return StudyPlan.from_dict(json.loads(path.read_text())) if path.is_file() else None


__all__ = ["ANALYSES", "GRID_KEYS", "RunSpec", "StudyPlan", "fingerprint", "parse_grid", "parse_seeds", "read_plan"]
