"""A study on a two-node Ray cluster whose second node cannot see the study folder, on one machine:

    head:    ray start --head (1 CPU), as the cluster's head; the driver runs beside it and owns the study folder
    node 2:  ray start --address … (1 CPU) inside `unshare -m` with a tmpfs mounted over the study folder's path, so
             whatever it wrote there would vanish with it — as on a cloud cluster with no shared file system

Every run comes home (its checkpoint, tables and log on the driver's disk, some of them trained on node 2); a node
removed mid-study has its task run again on the head, and the study ends with every run. Token authentication on,
as on any cluster. Only the processes this test started are stopped, by their process ids (never `ray stop`).
Needs root for `unshare -m` and mount; where that is not possible the test says why it skips."""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_CSV
from tests.sockets import descendants, kill_tree

ROOT = Path(__file__).resolve().parents[2]
RAY = shutil.which("ray") or str(Path(sys.executable).with_name("ray"))


def _lan_address() -> str | None:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))
            address = probe.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") else address


def _can_unshare() -> str | None:
    if os.geteuid() != 0:
        return "unshare -m and mount need root"
    if not shutil.which("unshare"):
        return "unshare (util-linux) is not installed"
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", "mount -t tmpfs tmpfs /mnt"],
                           capture_output=True, text=True)
    return None if probe.returncode == 0 else f"unshare -m cannot mount here: {probe.stderr.strip()[:120]}"


class Cluster:
    def __init__(self, tmp: Path):
        self.ip = _lan_address()
        self.port = _free_port()
        self.address = f"{self.ip}:{self.port}"
        self.env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
                    "RAY_USAGE_STATS_ENABLED": "0"}
        self.env.pop("RAY_ADDRESS", None)
        self.tmp = tmp
        self.procs: list[subprocess.Popen] = []
        self.head = self._spawn([RAY, "start", "--head", f"--port={self.port}", f"--node-ip-address={self.ip}",
                                 "--num-cpus=1", "--include-dashboard=false", "--disable-usage-stats", "--block"],
                                "head.log")

    def _spawn(self, command: list[str], log: str) -> subprocess.Popen:
        proc = subprocess.Popen(command, env=self.env, stdout=open(self.tmp / log, "w"), stderr=subprocess.STDOUT,
                                start_new_session=True, cwd=self.tmp)
        self.procs.append(proc)
        return proc

    def add_blind_node(self, hidden: Path) -> subprocess.Popen:
        """A second node that cannot see `hidden` (a tmpfs is mounted over it in the node's own mount namespace)."""
        hidden.mkdir(parents=True, exist_ok=True)
        script = (f"mount -t tmpfs tmpfs '{hidden}' && exec '{RAY}' start --address={self.address} "
                  f"--node-ip-address={self.ip} --num-cpus=1 --disable-usage-stats --block")
        return self._spawn(["unshare", "-m", "--propagation", "private", "sh", "-c", script], "node2.log")

    def kill(self, proc: subprocess.Popen) -> None:
        """Stop one node we started: `ray start --block` first (it stops its processes), then SIGKILL whatever of
        its process tree is left."""
        tree = descendants(proc.pid)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
        for pid in tree:  # the tree as it was: what SIGTERM left of it may hang from init now
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait(timeout=10)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                self.kill(proc)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    why = None if _lan_address() else "this machine has no non-loopback address for a second Ray node"
    why = why or _can_unshare()
    if why:
        pytest.skip(f"two-node cluster test skipped: {why}")
    tmp = tmp_path_factory.mktemp("cluster")
    c = Cluster(tmp)
    try:
        yield c
    finally:
        c.stop()


@contextlib.contextmanager
def _study(cluster: Cluster, out: Path, seeds: str, steps: int):
    """The study's driver on the cluster, ended with what it started when the block ends (also when the test fails)."""
    command = [sys.executable, "cli.py", "study", "--csv", str(SAMPLE_CSV), "--target", "load", "--features", "S",
               "--seeds", seeds, "--seq-len", "48", "--label-len", "24", "--pred-len", "12", "--d-model", "16",
               "--n-heads", "2", "--d-ff", "16", "--epochs", "1", "--max-steps", str(steps), "--analyses",
               "errors,sweep", "--max-windows", "64", "--address", cluster.address, "--out", str(out)]
    driver = subprocess.Popen(command, cwd=ROOT, env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
    try:
        yield driver
    finally:
        if driver.poll() is None:
            kill_tree(driver.pid)
            driver.communicate(timeout=30)


def _on_disk(out: Path) -> dict[str, dict]:
    found = {}
    for folder in sorted((out / "runs").iterdir()):
        train = json.loads((folder / "train.json").read_text())
        assert (folder / "checkpoint" / "manifest.json").is_file() and (folder / "checkpoint" /
                                                                        "weights.safetensors").is_file()
        assert {p.name for p in (folder / "tables").iterdir()} == {"errors.csv", "sweep.csv"}
        assert (folder / "log.txt").read_text().strip()
        found[folder.name] = train
    return found


def test_every_run_comes_home_from_a_node_without_the_study_folder(cluster, tmp_path):
    out = tmp_path / "study"
    node2 = cluster.add_blind_node(out)
    _node_ids(cluster)
    started = time.monotonic()
    with _study(cluster, out, "0-3", 40) as run:
        text, _ = run.communicate(timeout=600)
    assert run.returncode == 0, text[-3000:]
    runs = _on_disk(out)
    assert sorted(runs) == ["seed0", "seed1", "seed2", "seed3"], text[-2000:]
    assert len({r["node"] for r in runs.values()}) == 2, "both nodes should have trained runs"
    status = json.loads((out / "status.json").read_text())
    assert status["counts"]["done"] == 4 and status["moved_bytes"] > 0
    assert "4 of 4 runs done on this disk" in text
    print(f"\ncluster study, 4 runs: {time.monotonic() - started:.1f} s; {status['moved_bytes'] / 4 / 1024:.0f} KiB "
          "per run brought home through Ray")
    cluster.kill(node2)
    _node_ids(cluster, workers=0)  # the cluster has seen it go


NODES = """
import sys, ray
ray.init(address=sys.argv[1], log_to_driver=False)
for n in ray.nodes():
    if n["Alive"]:
        print(n["NodeID"], "head" if "node:__internal_head__" in n["Resources"] else "worker")
"""


def _node_ids(cluster: Cluster, workers: int = 1, seconds: float = 90) -> dict[str, str]:
    """{'head': id, 'worker': id} of the alive nodes, once exactly `workers` worker nodes are alive."""
    deadline = time.monotonic() + seconds
    while True:
        out = subprocess.run([sys.executable, "-c", NODES, cluster.address], env=cluster.env, capture_output=True,
                             text=True, timeout=120)
        pairs = [line.split()[:2] for line in out.stdout.splitlines() if line.split()[-1:] in (["head"], ["worker"])]
        if sum(kind == "worker" for _, kind in pairs) == workers and any(kind == "head" for _, kind in pairs):
            return {kind: node for node, kind in pairs}
        assert time.monotonic() < deadline, out.stdout[-1000:] + out.stderr[-1000:]
        time.sleep(1)


def test_a_node_removed_mid_study_has_its_runs_done_elsewhere(cluster, tmp_path):
    """Node 2 crashes (every process of it killed at once) while it trains a run: Ray runs that task again on the
    head (a system failure, retried), and the study ends with every run on the driver's disk."""
    out = tmp_path / "study"
    node2 = cluster.add_blind_node(out)
    lost = _node_ids(cluster)["worker"]
    with _study(cluster, out, "0-3", 200) as run:  # long enough to be seen training on node 2 (polled every 0.3 s)
        deadline = time.monotonic() + 300
        victim = None
        while time.monotonic() < deadline and victim is None:
            time.sleep(0.3)
            try:
                status = json.loads((out / "status.json").read_text())
            except (OSError, ValueError):
                continue
            on_node2 = [r for r in status.get("runs", []) if r.get("state") == "training" and r.get("node") == lost]
            if on_node2:
                kill_tree(node2.pid)  # a crash: no graceful shutdown
                victim = on_node2[0]["run"]
        assert victim, "no run was seen training on node 2"
        text, _ = run.communicate(timeout=900)
    assert run.returncode == 0, text[-3000:]
    runs = _on_disk(out)
    assert sorted(runs) == ["seed0", "seed1", "seed2", "seed3"], text[-2000:]
    assert runs[victim]["node"] != lost  # the lost task ran again on the head
    assert "4 of 4 runs done on this disk" in text
    node2.wait(timeout=30)
