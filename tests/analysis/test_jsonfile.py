"""JSON from outside: a size cap, a depth cap, the shape asked for, and one typed error naming the file (never a
RecursionError, never a read of a FIFO or a device)."""
from __future__ import annotations

import os

import pytest

from informer_lab.analysis import jsonfile
from informer_lab.analysis.errors import ConfigError


def test_nested_large_wrong_shape_and_special_files_are_one_typed_error(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    shallow_but_deep = tmp_path / "d70.json"
    shallow_but_deep.write_text('{"a": ' * 70 + "1" + "}" * 70)
    big = tmp_path / "big.json"
    big.write_text('{"a": "' + "x" * 2000 + '"}')
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    cases = {deep: "nested", shallow_but_deep: "more than 64 levels", big: "more than the 1,000", listed: "an array",
             fifo: "not a regular file", tmp_path / "missing.json": "cannot read", tmp_path: "not a regular file"}
    for path, words in cases.items():
        limit = 1000 if path == big else 1 << 20
        with pytest.raises(jsonfile.JsonError, match=words) as err:
            jsonfile.read(path, max_bytes=limit)
        assert isinstance(err.value, ConfigError) and isinstance(err.value, ValueError)
        assert path.name in str(err.value)
        assert jsonfile.read_or_none(path, max_bytes=limit) is None
    assert jsonfile.read(listed, want=list) == [1, 2] and jsonfile.depth({"a": [1, {"b": 2}]}) == 3


def test_an_answer_file_nested_too_deep_or_of_the_wrong_shape_is_named(tmp_path):
    from informer_lab.analysis.planted.synth import read_answer

    for text, words in (("[" * 100_000 + "]" * 100_000, "nested too deeply"), ('{"columns": 3}', "not an answer"),
                        ("[]", "JSON object")):
        path = tmp_path / "x.answer.json"
        path.write_text(text)
        with pytest.raises(ConfigError, match=words):
            read_answer(path)
