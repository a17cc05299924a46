"""Every case of the checkpoint corpus (cases.py) is refused with a CheckpointError: its words in the message, at
most 300 characters, in under a second; no hostile pickle's code ever runs."""
from __future__ import annotations

import time

import pytest

from informer_lab.analysis.checkpoints.folder import load_checkpoint
from informer_lab.analysis.errors import MESSAGE_CHARS, CheckpointError
from informer_lab.analysis.checkpoints.official import load_official_checkpoint

from .cases import CASES, MARKER
from .helpers import OFFICIAL_SETTINGS


def test_the_corpus_is_large_and_named_uniquely():
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))
    assert len(CASES) >= 40


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_refused(case, tmp_path):
    target = case.make(tmp_path)
    start = time.process_time()  # CPU time of this process: what the refusal cost, whatever else the machine runs
    with pytest.raises(CheckpointError) as info:
        if case.kind == "pth":
            load_official_checkpoint(target, **OFFICIAL_SETTINGS)
        else:
            load_checkpoint(target)
    seconds = time.process_time() - start
    message = str(info.value)
    assert len(message) <= MESSAGE_CHARS, message
    for word in case.words:
        assert word in message, (word, message)
    assert "weights_only" not in message
    assert seconds < 1.0, seconds
    assert not (tmp_path / MARKER).exists(), "the pickle's code ran"


def test_the_hostile_pickle_would_run_its_code(tmp_path):
    """The payload is real: plain pickle.loads of the same bytes runs it (so the refusal above proves something)."""
    import pickle

    from .cases import RunsCode

    pickle.loads(pickle.dumps(RunsCode(tmp_path / MARKER)))
    assert (tmp_path / MARKER).exists()


def test_torchs_own_refusal_is_reworded_without_its_advice(tmp_path):
    """Should torch.load ever be the one to refuse (it is not: the inspection comes first), its message is reworded:
    never "retry with weights_only=False", which would run the code."""
    import torch

    from informer_lab.analysis.checkpoints.official import _load_failure

    from .cases import RunsCode

    path = tmp_path / "checkpoint.pth"
    torch.save({"x": RunsCode(tmp_path / MARKER)}, path)
    with pytest.raises(Exception) as info:
        torch.load(path, weights_only=True)
    assert "`weights_only` set to `False`" in str(info.value)  # torch's own advice
    message = _load_failure(path, info.value)
    assert "contains Python code to run" in message and "posix.system" in message
    assert "weights_only" not in message and len(message) <= MESSAGE_CHARS
    assert not (tmp_path / MARKER).exists()
