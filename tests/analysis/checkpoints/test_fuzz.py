"""Random damage never gets past the checks as anything but a CheckpointError: byte flips and truncations of a valid
checkpoint's files (with the manifest rehashed or not, so that damage reaches every check) and of an official .pth."""
from __future__ import annotations

import functools
import warnings

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from informer_lab.analysis.checkpoints.folder import read_checkpoint_files
from informer_lab.analysis.errors import CheckpointError
from informer_lab.analysis.checkpoints.official import load_official_checkpoint

from .helpers import OFFICIAL_SETTINGS, official_state, rehashed, valid_files

NAMES = ("weights.safetensors", "config.json", "schema.json", "metrics.json", "manifest.json", "repair.json")


@functools.cache
def base() -> dict[str, bytes]:
    return valid_files(repair={"filled": {"b": 2}})


@functools.cache
def official_bytes() -> bytes:
    import io

    buffer = io.BytesIO()
    torch.save(official_state(), buffer)
    return buffer.getvalue()


def damage(data: bytes, positions: list[int], bits: list[int], cut: float | None) -> bytes:
    out = bytearray(data)
    for position, bit in zip(positions, bits):
        if out:
            out[position % len(out)] ^= 1 << bit
    return bytes(out[: int(len(out) * cut)] if cut is not None else out)


damages = dict(positions=st.lists(st.integers(0, 10 ** 7), min_size=0, max_size=4),
               bits=st.lists(st.integers(0, 7), min_size=4, max_size=4),
               cut=st.none() | st.floats(0.0, 1.0))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(NAMES), rehash=st.booleans(), **damages)
def test_damaged_checkpoint_files_only_raise_checkpoint_errors(name, rehash, positions, bits, cut):
    files = dict(base())
    files[name] = damage(files[name], positions, bits, cut)
    if rehash and name != "manifest.json":
        files = rehashed(files)
    try:
        checkpoint = read_checkpoint_files(files)
    except CheckpointError as err:
        assert len(str(err)) <= 300
        return
    # loaded: then the damage was harmless (a changed but valid number or text) and the model is sound
    assert all(torch.isfinite(p).all() for p in checkpoint.model.parameters())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(**damages)
def test_damaged_official_files_only_raise_checkpoint_errors(tmp_path, positions, bits, cut):
    path = tmp_path / "checkpoint.pth"
    path.write_bytes(damage(official_bytes(), positions, bits, cut))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model, _ = load_official_checkpoint(path, **OFFICIAL_SETTINGS)
        except CheckpointError as err:
            assert len(str(err)) <= 300 and "weights_only" not in str(err)
            return
    assert all(torch.isfinite(p).all() for p in model.parameters())
