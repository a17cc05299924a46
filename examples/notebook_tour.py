# %% [markdown]
# # Informer Lab from Python: a tour in notebook cells
#
# Each `# %%` block is a cell (VS Code, PyCharm and Jupytext open this file as a notebook); run as a script it
# runs every cell in order: `python examples/notebook_tour.py` (CI runs it). It loads the shipped sample model and
# data, forecasts, records one window's hook sites, masks a head, and runs two of the screens' analyses — the same
# functions the screens call, returning pandas tables. The API is described in docs/python-api.md.

# %%
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] if "__file__" in globals() else Path.cwd()
sys.path.insert(0, str(ROOT))  # the lab's folders, when this runs from a checkout rather than an installed copy

import torch  # noqa: E402

from informer_lab.analysis.attention.recording import record_forward, window_batch  # noqa: E402
from informer_lab.analysis.checkpoints.folder import load_checkpoint  # noqa: E402
from informer_lab.analysis.compare.verdict import check_against_baselines  # noqa: E402
from informer_lab.analysis.data import load_csv  # noqa: E402
from informer_lab.analysis.heads.ablation import head_sweep  # noqa: E402
from informer_lab.analysis.heads.masking import head_label, head_mask  # noqa: E402
from informer_lab.analysis.learning.forecasting import forecast_future  # noqa: E402
from informer_lab.analysis.learning.training import evaluate  # noqa: E402
from informer_lab.analysis.learning.workflow import prepare_for_checkpoint  # noqa: E402
from informer_lab.model import key_generator  # noqa: E402

# %% Load a checkpoint (no pickle: safetensors and JSON) and the data, prepared exactly as the model was trained.
checkpoint = load_checkpoint(ROOT / "sample_data" / "checkpoint")
frame = load_csv(ROOT / "sample_data" / "sample.csv")
prepared = prepare_for_checkpoint(checkpoint, frame)
model = checkpoint.model  # in eval mode; never changed by anything below
print(checkpoint.config.seq_len, checkpoint.config.label_len, checkpoint.config.pred_len, model.n_sites, "sites")

# %% Test error, and the model against seasonal naive and the linear baseline (with 95 % intervals over windows).
metrics = evaluate(model, prepared, "test", seed=0)
print(f"test MSE {metrics.mse:.4f} over {metrics.windows} windows")
check = check_against_baselines(model, prepared, seed=0, max_windows=128)
print(check.summary())

# %% Forecast past the end of the data.
future = forecast_future(checkpoint, frame, seed=0)
print(future.head())

# %% Record every hook site of one window (a recorder scoped to the call: nothing stays on the model).
batch = window_batch(prepared, "test", [0])
records = record_forward(model, batch, 0)  # patterns default to every site; e.g. "encoder.0.*.scores"
for name in list(records)[:6]:
    print(f"{name:32s} {tuple(records[name].shape)}")

# %% Mask a head (zero ablation) for one call: the same window's forecast with and without it.
with torch.no_grad():
    plain = model(batch, generator=key_generator(0))
    masked = model(batch, head_mask=head_mask(model, [(0, 1)]), generator=key_generator(0))
print(f"removing {head_label(model, 0, 1)} moves this window's forecast by {(masked - plain).abs().max():.4f}")

# %% A screen's analysis: the single-head sweep of the Head masking and Ablation screens, as a table.
sweep = head_sweep(model, prepared, "test", seed=0, max_windows=64)
print(sweep.table[["site", "head", "mse", "delta_mse"]].head(8))
