"""A named corpus of broken, tampered and hostile checkpoints: each is refused with a CheckpointError whose message
holds the case's words, is at most 300 characters, and comes in under a second.

A case is (name, make, words, kind): `make(tmp_path)` builds the thing from a tiny valid checkpoint and returns its
path; kind "folder" is loaded with `load_checkpoint`, kind "pth" with `load_official_checkpoint` (an official
Informer2020 checkpoint.pth). Used by test_corpus.py.
"""
from __future__ import annotations

import functools
import json
import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from .helpers import (FakeStorage, FakeTensor, craft_pth, edit_json, official_state, rehashed, state_of,
                      valid_files, with_header, with_state, write_folder)

MARKER = "code_ran.marker"  # created by the hostile pickles' payload if it ever runs


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[Path], Path]
    words: tuple[str, ...]
    kind: str = "folder"


@functools.cache
def base() -> dict[str, bytes]:
    return valid_files(repair={"filled": {"b": 2}, "notes": ["two gaps interpolated"]})


def folder(files_of: Callable[[dict[str, bytes]], dict[str, bytes]]) -> Callable[[Path], Path]:
    return lambda tmp: write_folder(tmp / "ck", files_of(dict(base())))


def config(**changes) -> Callable[[Path], Path]:
    return folder(lambda f: edit_json(f, "config", lambda d: d.update(changes)))


def schema(edit) -> Callable[[Path], Path]:
    return folder(lambda f: edit_json(f, "schema", edit))


def weights(edit) -> Callable[[Path], Path]:
    def make(files):
        state = state_of(files)
        edit(state)
        return with_state(files, state)
    return folder(make)


def header(edit) -> Callable[[Path], Path]:
    return folder(lambda f: with_header(f, edit))


def without(name: str) -> Callable[[Path], Path]:
    return folder(lambda f: {k: v for k, v in f.items() if k != name})


def raw(name: str, data: bytes, rehash: bool = True) -> Callable[[Path], Path]:
    def make(files):
        files = dict(files)
        files[name] = data
        return rehashed(files) if rehash else files
    return folder(make)


def flipped(name: str) -> Callable[[Path], Path]:
    def make(files):
        data = bytearray(files[name])
        data[len(data) // 2] ^= 0x01
        return {**files, name: bytes(data)}
    return folder(make)


def _first(state, suffix):
    return next(k for k in state if k.endswith(suffix))


def _shift(h, name, by):
    h[name]["data_offsets"] = [o + by for o in h[name]["data_offsets"]]


def _overlap(h):
    """Point a tensor at the bytes of an earlier one of the same shape and dtype (lengths stay right)."""
    names = sorted((k for k in h if k != "__metadata__"), key=lambda k: h[k]["data_offsets"][0])
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if (h[a]["shape"], h[a]["dtype"]) == (h[b]["shape"], h[b]["dtype"]):
                h[b]["data_offsets"] = list(h[a]["data_offsets"])
                return


def _manifest_with(files, extra):
    manifest = json.loads(files["manifest.json"])
    manifest["sha256"].update(extra)
    return {**files, "manifest.json": json.dumps(manifest).encode()}


def _mkfifo_config(tmp: Path) -> Path:
    ck = write_folder(tmp / "ck", {k: v for k, v in base().items() if k != "config.json"})
    os.mkfifo(ck / "config.json")
    return ck


def _symlink_to_device(tmp: Path) -> Path:
    ck = write_folder(tmp / "ck", {k: v for k, v in base().items() if k != "weights.safetensors"})
    (ck / "weights.safetensors").symlink_to("/dev/zero")
    return ck


def _file(tmp: Path) -> Path:
    (tmp / "ck").write_bytes(b"weights")
    return tmp / "ck"


def _deep(depth: int) -> bytes:
    return b'{"a": ' + b"[" * depth + b"]" * depth + b"}"


# --------------------------------------------------------------------------------------------
# Official .pth files
# --------------------------------------------------------------------------------------------
class RunsCode:
    """Unpickling this runs a shell command (the classic pickle attack)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def pth(edit) -> Callable[[Path], Path]:
    def make(tmp):
        state = official_state()
        edit(state)
        path = tmp / "checkpoint.pth"
        torch.save(state, path)
        return path
    return make


def crafted(entry: str, fake: Callable[[], tuple[FakeTensor, dict[str, bytes]]]) -> Callable[[Path], Path]:
    def make(tmp):
        state = dict(official_state())
        tensor, records = fake()
        state[entry] = tensor
        return craft_pth(tmp / "checkpoint.pth", state, records)
    return make


EMBED = "enc_embedding.value_embedding.tokenConv.weight"  # [d_model 8, c_in 3, 3]


def _fake(numel, size, stride, offset=0, record=None):
    storage = FakeStorage("x", "FloatStorage", numel)
    return lambda: (FakeTensor(storage, offset, size, stride), {"x": record if record is not None else
                                                               bytes(4 * min(numel, 10_000))})


def _code_pth(tmp: Path) -> Path:
    path = tmp / "checkpoint.pth"
    torch.save({"model": official_state(), "args": RunsCode(tmp / MARKER)}, path)
    return path


def _code_pickle(tmp: Path) -> Path:
    path = tmp / "checkpoint.pth"
    path.write_bytes(pickle.dumps(RunsCode(tmp / MARKER)))
    return path


def _legacy(tmp: Path) -> Path:
    path = tmp / "checkpoint.pth"
    torch.save(official_state(), path, _use_new_zipfile_serialization=False)
    return path


def _text(tmp: Path) -> Path:
    path = tmp / "checkpoint.pth"
    path.write_bytes(b"date,OT\n2016-07-01 00:00:00,30.5\n")
    return path


CASES = [
    # the folder, the manifest, the hashes
    Case("empty_folder", lambda tmp: write_folder(tmp / "ck", {}), ("missing", "weights.safetensors")),
    Case("file_instead_of_folder", _file, ("not a checkpoint folder",)),
    Case("no_such_folder", lambda tmp: tmp / "nowhere", ("does not exist",)),
    Case("missing_weights", without("weights.safetensors"), ("missing weights.safetensors",)),
    Case("missing_manifest", without("manifest.json"), ("missing manifest.json",)),
    Case("config_is_a_fifo", _mkfifo_config, ("config.json", "not a regular file")),
    Case("weights_symlink_to_dev_zero", _symlink_to_device, ("weights.safetensors", "not a regular file")),
    Case("weights_flipped_byte", flipped("weights.safetensors"), ("weights.safetensors does not match its SHA-256",)),
    Case("config_flipped_byte", flipped("config.json"), ("config.json does not match its SHA-256",)),
    Case("schema_flipped_byte", flipped("schema.json"), ("schema.json does not match its SHA-256",)),
    Case("repair_flipped_byte", flipped("repair.json"), ("repair.json does not match its SHA-256",)),
    Case("manifest_not_json", raw("manifest.json", b"{sha256: nope", rehash=False),
         ("manifest.json", "not readable JSON")),
    Case("manifest_is_an_array", raw("manifest.json", b"[1, 2]", rehash=False),
         ("manifest.json must hold a JSON object",)),
    Case("manifest_unknown_format", folder(lambda f: {**f, "manifest.json": f["manifest.json"].replace(
        b"informer-lab/1", b"pickle/9")}), ("unknown format",)),
    Case("manifest_lists_unknown_file", folder(lambda f: _manifest_with(f, {"../etc/passwd": "0" * 64})),
         ("lists an unknown file",)),
    Case("manifest_lists_missing_repair", without("repair.json"), ("lists a file that is missing", "repair.json")),
    Case("repair_not_in_manifest", folder(lambda f: {**f, "manifest.json": json.dumps({"format": "informer-lab/1",
         "sha256": {k: v for k, v in json.loads(f["manifest.json"])["sha256"].items() if k != "repair.json"}})
         .encode()}), ("repair.json is not listed in manifest.json",)),
    Case("repair_is_an_array", raw("repair.json", b"[]"), ("repair.json must hold a JSON object",)),
    Case("config_too_large", raw("config.json", b"{" + b" " * 70_000 + b"}"), ("config.json", "bytes, more than")),
    # config.json
    Case("config_not_json", raw("config.json", b"d_model = 8"), ("config.json is not readable JSON",)),
    Case("config_is_an_array", raw("config.json", b"[8, 2]"), ("config.json must hold a JSON object",)),
    Case("config_duplicate_key", raw("config.json", b'{"enc_in": 3, "enc_in": 300}'), ("config.json", "appears twice")),
    Case("d_model_1e9", config(d_model=10 ** 9), ("d_model must be a whole number in 1..8,192", "1000000000")),
    Case("e_layers_1e6", config(e_layers=[10 ** 6]), ("e_layers must be a list",)),
    Case("e_layers_1000_replicas", config(e_layers=[1] * 1000), ("e_layers must be a list",)),
    Case("n_heads_0", config(n_heads=0), ("n_heads must be a whole number in 1..256", "got 0")),
    Case("n_heads_does_not_divide", config(n_heads=3), ("n_heads=3 does not divide d_model=8",)),
    Case("d_model_float", config(d_model=8.0), ("d_model must be a whole number", "8.0")),
    Case("d_layers_bool", config(d_layers=True), ("d_layers must be a whole number", "True")),
    Case("seq_len_string", config(seq_len="16"), ("seq_len must be a whole number", "'16'")),
    Case("mix_int", config(mix=1), ("mix must be true or false",)),
    Case("activation_unknown", config(activation="tanh"), ("activation must be one of", "'tanh'")),
    Case("dropout_nan", config(dropout=float("nan")), ("dropout must be a number in [0, 1)",)),
    Case("unknown_config_field", config(use_amp=True), ("unknown config fields: use_amp",)),
    Case("enc_in_missing", folder(lambda f: edit_json(f, "config", lambda d: d.pop("enc_in") and None)),
         ("'enc_in' is missing",)),
    Case("label_len_over_seq_len", config(label_len=17), ("label_len=17 is larger than seq_len=16",)),
    Case("model_over_200M_parameters", config(d_model=8192, d_ff=65536, e_layers=[16] * 4, n_heads=8),
         ("parameters, more than the 200,000,000",)),
    Case("position_tables_too_large", config(seq_len=100_000, d_model=512, n_heads=8),
         ("position tables", "100000")),
    Case("config_larger_than_its_weights", config(d_model=256, d_ff=1024), ("weights.safetensors has only",)),
    Case("config_does_not_match_weights", config(d_ff=16), ("has shape [8, 8, 1], the config implies [16, 8, 1]",)),
    # schema.json
    Case("schema_is_an_array", raw("schema.json", b"[]"), ("schema.json must hold a JSON object",)),
    Case("scaler_mean_nan", schema(lambda s: s["scaler"]["mean"].__setitem__(1, float("nan"))),
         ("scaler.mean of column 'b'", "not a finite number")),
    Case("scaler_std_infinite", schema(lambda s: s["scaler"]["std"].__setitem__(0, float("inf"))),
         ("scaler.std of column 'a'", "not a finite number")),
    Case("scaler_std_zero", schema(lambda s: s["scaler"]["std"].__setitem__(2, 0)),
         ("standard deviation must be > 0",)),
    Case("scaler_std_negative", schema(lambda s: s["scaler"]["std"].__setitem__(2, -1.5)), ("must be > 0",)),
    Case("scaler_mean_short", schema(lambda s: s["scaler"]["mean"].pop() and None),
         ("scaler.mean must be a list of 3",)),
    Case("scaler_column_twice", schema(lambda s: s["scaler"]["columns"].__setitem__(0, "b")),
         ("names a column twice",)),
    Case("schema_seq_len_differs", schema(lambda s: s["spec"].update(seq_len=32, label_len=8)),
         ("schema.json says seq_len=32", "config.json seq_len=16")),
    Case("schema_target_not_last", schema(lambda s: s.update(target_columns=["a"])), ("not the last input columns",)),
    Case("metrics_nested_100k_deep", raw("metrics.json", _deep(100_000)), ("metrics.json is nested too deeply",)),
    Case("metrics_nested_40_deep", raw("metrics.json", _deep(40)), ("metrics.json is nested more than 32 levels",)),
    # weights.safetensors
    Case("weights_truncated_to_4_bytes", raw("weights.safetensors", b"\x10\x00\x00\x00"),
         ("weights.safetensors has only 4 bytes",)),
    Case("weights_truncated_in_the_data", folder(lambda f: rehashed(f, weights=f["weights.safetensors"][:-100])),
         ("data_offsets",)),
    Case("header_claims_huge_length", folder(lambda f: rehashed(f, weights=(2 ** 60).to_bytes(8, "little")
                                                                + f["weights.safetensors"][8:])),
         ("the header claims 1,152,921,504,606,846,976 bytes",)),
    Case("header_not_json", folder(lambda f: rehashed(
        f, weights=(5).to_bytes(8, "little") + b"{nope" + f["weights.safetensors"][8:])),
         ("header is not valid JSON",)),
    Case("header_lies_about_offsets", header(lambda h: _shift(h, "projection.bias", 10 ** 6)), ("data_offsets",)),
    Case("header_tensors_overlap", header(_overlap), ("overlap",)),
    Case("integer_weights", weights(lambda s: s.__setitem__("projection.weight",
                                                          s["projection.weight"].to(torch.int32))),
         ("weight projection.weight has dtype I32", "floating point")),
    Case("bool_weights", weights(lambda s: s.__setitem__("projection.bias", s["projection.bias"] > 0)),
         ("dtype BOOL",)),
    Case("nan_weight", weights(lambda s: s["projection.weight"].view(-1).__setitem__(3, float("nan"))),
         ("projection.weight holds 1 NaN or infinite",)),
    Case("inf_weight", weights(lambda s: s[_first(s, "ffn.conv1.bias")].fill_(float("inf"))),
         ("ffn.conv1.bias holds 8 NaN or infinite",)),
    Case("f64_weight_overflows_float32", weights(lambda s: s.__setitem__("projection.bias",
                                                                          s["projection.bias"].double() * 1e300)),
         ("projection.bias holds", "NaN or infinite")),
    Case("negative_running_var", weights(lambda s: s[_first(s, "running_var")].__setitem__(0, -1.0)),
         ("running_var holds negative values",)),
    Case("missing_tensor", weights(lambda s: s.pop("projection.bias")), ("missing [projection.bias]",)),
    Case("extra_tensor", weights(lambda s: s.__setitem__("backdoor.weight", torch.zeros(2))),
         ("unexpected [backdoor.weight]",)),
    Case("renamed_tensor", weights(lambda s: s.__setitem__("projection.b", s.pop("projection.bias"))),
         ("missing [projection.bias]", "unexpected [projection.b]")),
    Case("wrong_shape", weights(lambda s: s.__setitem__("projection.weight", torch.zeros(3, 9))),
         ("weight projection.weight has shape [3, 9], the config implies [3, 8]",)),
    # official .pth files
    Case("pth_pickle_runs_code", _code_pth, ("contains Python code to run", "refused for safety", "posix.system"),
         "pth"),
    Case("pth_plain_pickle_runs_code", _code_pickle, ("contains Python code to run", "state_dict"), "pth"),
    Case("pth_expanded_zero_stride", pth(lambda s: s.__setitem__(EMBED, torch.zeros(1).expand(100_000, 3, 3))),
         ("tensor enc_embedding.value_embedding.tokenConv.weight", "expanded"), "pth"),
    Case("pth_overlapping_strides", pth(lambda s: s.__setitem__(EMBED, torch.zeros(30).as_strided((8, 3, 3),
                                                                                       (1, 1, 1)))),
         ("overlapping strides",), "pth"),
    Case("pth_negative_stride", crafted(EMBED, _fake(72, (8, 3, 3), (9, -3, 1), offset=10)),
         ("negative-stride",), "pth"),
    Case("pth_storage_claims_17GB", crafted(EMBED, _fake(4_300_000_000, (8, 3, 3), (9, 3, 1))),
         ("claims 17,200,000,000 bytes but its record holds",), "pth"),
    Case("pth_storage_smaller_than_shape", crafted(EMBED, _fake(10, (8, 3, 3), (9, 3, 1))),
         ("needs 72 elements of a storage that holds 10",), "pth"),
    Case("pth_integer_weights", pth(lambda s: s.__setitem__(EMBED, s[EMBED].long())), ("has dtype int64",), "pth"),
    Case("pth_nan_weights", pth(lambda s: s[EMBED].view(-1).__setitem__(0, float("nan"))),
         ("tensor enc_embedding.value_embedding.tokenConv.weight holds 1 NaN",), "pth"),
    Case("pth_d_model_9000", pth(lambda s: s.__setitem__(EMBED, torch.zeros(9000, 3, 3))),
         ("d_model must be a whole number in 1..8,192", "9000"), "pth"),
    Case("pth_e_layers_1e6", pth(lambda s: s.__setitem__("encoder.attn_layers.999999.norm1.weight", torch.zeros(8))),
         ("e_layers must be a list",), "pth"),
    Case("pth_legacy_format", _legacy, ("legacy (pre-1.6) format",), "pth"),
    Case("pth_csv_text", _text, ("not a torch checkpoint file",), "pth"),
]
