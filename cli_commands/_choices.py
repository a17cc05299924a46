"""The names the commands offer as choices, for the parser alone.

`python cli.py --help` and an argument error answer without importing torch, pandas or the analyses (they took ~10 s
of CPU before a word was printed); the analyses are imported when a command runs. These names are stated where
they live (the modules named beside each); tests/cli/test_cli.py holds every one here equal to its source.
"""
from __future__ import annotations

ATTENTION_KINDS = ("prob", "full", "logsparse", "strided", "fixed", "window", "block", "compressed", "lsh",
                   "adaptive")  # model.config.ATTENTION_KINDS
SCHEDULES = ("cosine", "paper", "constant")  # analysis.learning.schedules.SCHEDULES
EMBEDDINGS = ("auto", "conv", "lags")  # analysis.learning.embedding.EMBEDDINGS
UNIT_ROOTS = ("keep", "withhold")  # analysis.learning.unit_root.UNIT_ROOTS
FILLS = ("none", "interpolate", "ffill")  # analysis.data.FILLS
BASELINES = ("zeros", "window_mean")  # analysis.instruments.attribution.BASELINES
EDIT_KINDS = ("none", "spike", "shift", "scale", "trend", "zero", "shuffle", "paste")  # …window_edits.EDIT_KINDS
PATCH_POINTS = ("heads", "embeddings", "memory")  # analysis.instruments.patching.PATCH_POINTS
ANALYSES = ("errors", "sweep", "importance", "agreement", "roles", "lens", "shares", "composition",
            "features")  # study.plan.ANALYSES
DEFAULT_ANALYSES = tuple(a for a in ANALYSES if a != "features")  # study.plan.DEFAULT_ANALYSES
FAITHFULNESS_WINDOWS = 128  # analysis.heads.faithfulness.MAX_WINDOWS
VARIANT_KINDS = ATTENTION_KINDS  # analysis.instruments.variants.KINDS
VARIANT_WINDOWS = 128  # analysis.instruments.variants.MAX_WINDOWS
COST_LENGTHS = (96, 384, 1440, 4096, 8192)  # analysis.instruments.attention_cost.LENGTHS
DISTIL_FORMS = ("routed", "structural", "jacobian")  # analysis.anatomy.transfer.FORMS
SYNTH_KINDS = ("seasonal_ar", "driver", "spikes", "regime")  # analysis.planted.synth.KINDS
BENCH_KINDS = SYNTH_KINDS + ("multivariate",)  # analysis.circuits.benchmark.ALL_KINDS
FEATURE_SITE = "encoder.out"  # analysis.features.sites.DEFAULT_SITE (tests/cli/test_sae.py holds them equal)

# TrainSettings' defaults (analysis.learning.training.TrainSettings), shown by --help
AUTO_STEPS, AUTO_EPOCHS = 800, (2, 6)  # analysis.learning.settings: what an unset --epochs plans
TRAIN_DEFAULTS = {"epochs": None, "batch_size": 16, "learning_rate": 3e-3, "schedule": "cosine", "patience": 3,
                  "average": 0.98}
# ModelSize's defaults (analysis.learning.settings.ModelSize), shown by --help
SIZE_DEFAULTS = {"d_model": 64, "n_heads": 4, "d_ff": 128, "d_layers": 1, "factor": 8, "dropout": 0.05}

# The model's size limits a checkpoint may hold (analysis.checkpoints.checks: INT_RANGES, MAX_REPLICAS,
# MAX_REPLICA_LAYERS): train, study and import refuse a size beyond them while they parse their arguments
SIZE_RANGES = {"seq_len": (1, 100_000), "label_len": (0, 100_000), "pred_len": (1, 100_000), "d_model": (1, 8192),
               "n_heads": (1, 256), "d_layers": (1, 16), "d_ff": (1, 65536), "factor": (1, 1000)}
MAX_REPLICAS, MAX_REPLICA_LAYERS = 8, 16
STUDY_MAX_RUNS = 2000  # study.plan.MAX_RUNS
GRID_KEYS = ("attention", "factor", "d_model", "n_heads", "d_ff", "e_layers", "d_layers", "dropout", "seq_len",
             "label_len", "pred_len", "features", "learning_rate", "batch_size", "epochs", "revin", "embedding",
             "unit_roots")  # study.plan
SYNTH_LIMITS = {"rows": 2_000_000, "irrelevant": 64, "decoys": 8}  # analysis.planted.synth: MAX_ROWS, MAX_IRRELEVANT,
# MAX_DECOYS
