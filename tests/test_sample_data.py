"""sample_data/: the bundled CSV loads cleanly and is exactly what its generator writes."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import pandas as pd

from analysis.data import (
    DataSpec,
    load_csv,
    prepare,
)

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_data" / "sample.csv"


def test_sample_csv_loads_cleanly():
    frame = load_csv(SAMPLE)
    assert frame.freq == "h" and frame.datetime_column == "date"
    assert 2000 <= frame.n_rows <= 20000
    assert frame.columns == ("temperature", "humidity", "price", "load")
    assert frame.dropped_columns == ()
    assert SAMPLE.stat().st_size < 1_000_000
    prepared = prepare(frame, DataSpec("load"))
    assert prepared.enc_in == 4 and prepared.columns[-1] == "load"


def test_sample_csv_is_what_the_generator_writes():
    spec = importlib.util.spec_from_file_location("sample_generate", REPO / "sample_data" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    generated = module.generate()
    on_disk = pd.read_csv(SAMPLE, dtype={"date": str})
    assert list(generated.columns) == list(on_disk.columns)
    assert (generated["date"] == on_disk["date"]).all()
    np.testing.assert_allclose(generated.drop(columns="date").to_numpy(), on_disk.drop(columns="date").to_numpy(),
                               rtol=0, atol=1e-9)
    assert module.generate(50, 1).equals(module.generate(50, 1))


def test_the_shipped_sample_model_is_what_its_script_trains_bit_for_bit(tmp_path):
    """sample_data/make_checkpoint.py retrains the shipped checkpoint from its seed. On the torch build and CPU
    instruction set that made it (recorded in its metrics.json) every file must be identical; elsewhere the kernels
    may round differently, so the weights must agree closely and the test metrics to 1 %."""
    import json
    import subprocess
    import sys

    from safetensors.numpy import load_file

    shipped = REPO / "sample_data" / "checkpoint"
    assert sum(p.stat().st_size for p in shipped.iterdir()) < 1 << 20  # under 1 MB
    out = tmp_path / "again"
    run = subprocess.run([sys.executable, str(REPO / "sample_data" / "make_checkpoint.py"), "--out", str(out)],
                         capture_output=True, text=True, timeout=600, cwd=REPO)
    assert run.returncode == 0, run.stderr
    built, rebuilt = (json.loads((d / "metrics.json").read_text()) for d in (shipped, out))
    if built["build"] == rebuilt["build"]:
        for name in sorted(p.name for p in shipped.iterdir()):
            assert (shipped / name).read_bytes() == (out / name).read_bytes(), name
    else:
        a, b = load_file(str(shipped / "weights.safetensors")), load_file(str(out / "weights.safetensors"))
        assert a.keys() == b.keys()
        assert max(float(np.abs(a[k] - b[k]).max()) for k in a) < 1e-3
        assert rebuilt["test"]["mse"] == pytest.approx(built["test"]["mse"], rel=0.01)
