"""A study's local Ray is reachable only by its user: every socket of its process tree listens on
loopback, token authentication stays on, a client without the token is refused, the token file is 0600; a study
that joins a cluster with the wrong token stops at once with one line, not after Ray's retries.

The Ray runs in a subprocess of the test's own (started, then stopped by its pid: never `ray stop`)."""
from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_CSV
from tests.sockets import listening, loopback

ROOT = Path(__file__).resolve().parents[2]

HOST = textwrap.dedent("""
    import signal, sys, time
    sys.path.insert(0, {root!r})
    from informer_lab.study import ray_session
    ray = ray_session.start_local(1)

    @ray.remote
    def pid():
        import os
        return os.getpid()

    ray.get(pid.remote())  # a worker runs: its sockets are counted too
    from ray._private import worker
    print("GCS", ray.get_runtime_context().gcs_address, worker._global_node.get_session_dir_path(), flush=True)

    def stop(*_):
        ray.shutdown()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    while True:
        time.sleep(0.2)
""")

CLIENT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from ray._raylet import GcsClient
    from ray.exceptions import AuthenticationError
    try:
        GcsClient(address=sys.argv[1])
        print("ACCEPTED")
    except AuthenticationError:
        print("REFUSED")
""")


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ray-token")
    token_file = folder / "auth_token"
    token_file.write_text("a" * 64)
    token_file.chmod(0o644)  # as Ray itself creates it: readable by every user
    env = {**os.environ, "RAY_AUTH_TOKEN_PATH": str(token_file)}
    env.pop("RAY_AUTH_TOKEN", None)
    env.pop("RAY_AUTH_MODE", None)
    host = subprocess.Popen([sys.executable, "-c", HOST.format(root=str(ROOT))], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        line = host.stdout.readline()
        assert line.startswith("GCS "), f"the local Ray did not start: {line!r}"
        yield host, line.split()[1], token_file, Path(line.split()[2])
    finally:
        host.send_signal(signal.SIGTERM)
        try:
            host.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(host.pid, signal.SIGKILL)  # the group this test started, and only it
            host.wait()


def test_the_local_ray_listens_on_loopback_only(local_ray):
    host, gcs, *_ = local_ray
    sockets = listening(host.pid)
    names = {name for *_, name in sockets}
    assert {"gcs_server", "raylet"} <= names, sockets
    assert all(loopback(address) for address, *_ in sockets), [s for s in sockets if not loopback(s[0])]
    assert gcs.split(":")[0] in ("127.0.0.1", "::1", "localhost")


def test_the_token_file_is_the_owners_only_and_a_client_without_the_token_is_refused(local_ray):
    _, gcs, token_file, _ = local_ray
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    for token, answer in (("b" * 64, "REFUSED"), ("a" * 64, "ACCEPTED")):
        env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token}
        out = subprocess.run([sys.executable, "-c", CLIENT.format(root=str(ROOT)), gcs], env=env, capture_output=True,
                             text=True, timeout=60)
        assert answer in out.stdout, out.stderr[-500:]


def test_a_study_that_joins_with_the_wrong_token_stops_at_once_with_one_line(local_ray, tmp_path):
    _, gcs, *_ = local_ray
    env = {**os.environ, "RAY_AUTH_TOKEN": "c" * 64}
    command = [sys.executable, "cli.py", "study", "--csv", str(SAMPLE_CSV), "--target", "load", "--seeds", "0",
               "--address", gcs, "--out", str(tmp_path / "s")]
    started = time.monotonic()
    out = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    seconds = time.monotonic() - started
    assert out.returncode == 2
    assert "refused this machine's Ray token" in out.stderr and "Traceback" not in out.stderr
    # Ray alone retries a refused token for 20 s and then says only "Failed to connect": against what the command
    # must do anyway (import torch, pandas and Ray, read the CSV), on this machine now, it takes far less than 20 s
    # extra
    started = time.monotonic()
    baseline = subprocess.run([sys.executable, "-c", "import torch, pandas, ray; pandas.read_csv(%r)" % str(SAMPLE_CSV)],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert baseline.returncode == 0, baseline.stderr[-2000:]
    assert seconds < time.monotonic() - started + 15


def test_a_new_token_file_is_created_for_its_owner_only(tmp_path, monkeypatch):
    from informer_lab.study.ray_session import secure_token_file

    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(tmp_path / "ray" / "auth_token"))
    path = secure_token_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(path.read_text()) == 64
    assert secure_token_file() == path and len(path.read_text()) == 64  # kept, not regenerated


def test_the_local_ray_keeps_its_sessions_in_a_folder_of_its_users_only(local_ray):
    """Not Ray's default /tmp/ray (mode 0777, shared by every user): a folder of this user's, mode 0700, read here
    without touching it (private_temp_dir() would tighten it). Ray makes the folder it is given and its session
    folders 0777; the folder above them stays 0700 and the session folders are tightened once Ray has started."""
    import tempfile

    *_, session = local_ray
    root = Path(os.environ.get("RAY_TMPDIR") or tempfile.gettempdir()) / f"informer-lab-ray-{os.getuid()}"
    assert session.parent.parent == root and session.is_dir()
    info = root.lstat()
    assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.getuid()
    for folder in (session.parent, session, session / "logs", session / "sockets"):
        assert stat.S_IMODE(folder.lstat().st_mode) == 0o700, folder


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="command lines are read from /proc")
def test_no_dashboard_process_runs_unless_asked(local_ray):
    """Ray starts its dashboard's head (dashboard.py) even with include_dashboard=False; the study's Ray does not."""
    from informer_lab.running import descendants

    host, *_ = local_ray
    lines = []
    for pid in [host.pid, *descendants(host.pid)]:
        try:
            lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue
    assert any("raylet" in line for line in lines), lines
    assert not any("dashboard/dashboard.py" in line for line in lines), [l for l in lines if "dashboard" in l]


def test_a_private_folder_that_is_loose_is_tightened_and_one_that_is_not_ours_is_refused(tmp_path, monkeypatch):
    from informer_lab.analysis.errors import ConfigError
    from informer_lab.study.ray_session import private_temp_dir

    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    loose = tmp_path / f"informer-lab-ray-{os.getuid()}"
    loose.mkdir(mode=0o777)
    loose.chmod(0o777)
    assert private_temp_dir() == loose and stat.S_IMODE(loose.stat().st_mode) == 0o700
    loose.rmdir()
    loose.write_text("not a folder")
    with pytest.raises(ConfigError, match="not a folder of yours"):
        private_temp_dir()
