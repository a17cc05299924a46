"""A study's local Ray on a busy machine: a start whose node does not register in Ray's 30 s is tried again, and a
start that never succeeds ends in one line naming the cause, never a traceback."""
from __future__ import annotations

import pytest

from informer_lab.analysis.errors import ConfigError
from informer_lab.study import ray_session

TIMED_OUT = ("The current node timed out during startup. This could happen because some of the raylet failed to "
             "startup or the GCS has become overloaded.")


@pytest.fixture
def fake_ray(monkeypatch, tmp_path):
    """ray.init failing the first `fail` times with Ray's own start-up error; counts inits and shutdowns."""
    import ray

    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(tmp_path / "token"))
    calls = {"init": 0, "shutdown": 0, "fail": 0}

    def init(**kwargs):
        calls["init"] += 1
        if calls["init"] <= calls["fail"]:
            raise Exception(TIMED_OUT)

    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "shutdown", lambda: calls.__setitem__("shutdown", calls["shutdown"] + 1))
    return calls


def test_a_start_that_times_out_is_tried_again_after_shutting_down_what_it_started(fake_ray):
    fake_ray["fail"] = 2
    ray_session.start_local(1)
    assert fake_ray["init"] == 3 and fake_ray["shutdown"] == 2


def test_a_start_that_never_succeeds_is_one_line_naming_the_cause(fake_ray):
    fake_ray["fail"] = 99
    with pytest.raises(ConfigError) as caught:
        ray_session.start_local(1)
    message = str(caught.value)
    assert "\n" not in message and "did not start" in message and "timed out during startup" in message
    assert fake_ray["init"] == ray_session.START_TRIES


def test_the_study_command_prints_that_line_and_exits_2(fake_ray, tmp_path, capsys):
    from informer_lab import cli
    from tests.conftest import SAMPLE_CSV

    fake_ray["fail"] = 99
    code = cli.main(["study", "--csv", str(SAMPLE_CSV), "--target", "load", "--seeds", "0", "--epochs", "1",
                     "--out", str(tmp_path / "study")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("error: the study's local Ray did not start")
    assert not any("Traceback" in line for line in err)
