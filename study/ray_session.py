"""Ray for a study: a local Ray of the study's own that only its user on this machine can reach, or a cluster joined
on purpose, refused at once when its token does not match.

**Local (the default)** — `ray.init(address="local")`: always a Ray of this process's own, never whatever cluster
the `ray_current_cluster` file in Ray's temporary folder names (a plain `ray.init()` joins that one, and then fails
with "num_cpus must not be provided" once it has ended).
- *Loopback.* Ray 2.60 turns "localhost" into the machine's LAN address (`resolve_ip_for_localhost`) and its gRPC
  servers listen on every interface; anybody who reaches those ports can run code (Ray's security page). With
  `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`, Ray's own single-machine mode for laptops, the node address is the loopback
  address and the GCS server, raylet, workers and runtime-env agent bind 127.0.0.1 only (tests/study/
  test_ray_security.py checks every listening socket of the process tree).
- *Token.* Token authentication stays on (`RAY_AUTH_MODE=token`). Ray writes its token file readable by every user
  (`open(path, "w")`, 0644); here the file (`RAY_AUTH_TOKEN_PATH`, else `~/.ray/auth_token`) is created 0600 before
  Ray would create it, and a looser one of ours is tightened to 0600.
- *No dashboard* unless asked for, and then on 127.0.0.1. Ray starts its dashboard's head process even with
  `include_dashboard=False` (`dashboard.py --disable-frontend`, a server for its job and state APIs on a port of its
  own): the local Ray starts without it (`_no_dashboard_head`). Every Ray node also runs a dashboard *agent*
  (`dashboard/agent.py`: metrics and events for the raylet, which stops when its agent does): it stays, on loopback.
- *Its own temporary folder.* Ray's default, /tmp/ray, is created mode 0777 and shared by every user of the
  machine; a study's local Ray keeps its sessions (logs, sockets, spilled objects) under `private_temp_dir()`, a
  folder of this user's, mode 0700, checked before use (`RAY_TMPDIR`'s parent, or the system's temporary folder).
  Ray makes every folder it creates or is given mode 0777 (`try_make_directory_shared`), so it is given a folder
  inside that one (`ray/`): the 0700 folder above keeps every other user out whatever Ray does below it, and once
  Ray has started, the folders it made are tightened to 0700 too (`tighten`).
- *A busy machine.* Ray gives its new node 30 s (a constant in `ray._private.node`) to register with its GCS and
  then raises "The current node timed out during startup"; on a loaded machine that happened in 2 of 3 starts. The
  start is tried `START_TRIES` times (what the failed try started is shut down first); after the last a one-line
  ConfigError names the cause, never a traceback.

**A cluster** (`--address HOST:PORT` or `auto`): the nodes must share the cluster's token (`RAY_AUTH_TOKEN`, or the
token file on every node) and the cluster's ports belong behind a firewall. Before `ray.init`, which retries a
refused token for 20 s and then says only "Failed to connect", the GCS is reached (5 s) and asked for the cluster's
id with this machine's token: a refusal is a one-line ConfigError.
"""
from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
import stat
from pathlib import Path

from informer_lab.analysis.errors import ConfigError

log = logging.getLogger(__name__)

LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
CONNECT_SECONDS = 5.0
START_TRIES = 4  # each waits up to Ray's 30 s for the node to register


def token_path() -> Path:
    """Where Ray reads its token from when RAY_AUTH_TOKEN is not set."""
    return Path(os.environ.get("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray" / "auth_token").expanduser()


def secure_token_file() -> Path | None:
    """Make sure Ray's token file exists and only its owner can read it; None when RAY_AUTH_TOKEN supplies it."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return None
    path = token_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        info = path.stat()
        if info.st_mode & 0o077:
            if info.st_uid != os.getuid():
                raise ConfigError(f"Ray's token file {path} can be read by other users and is not yours to tighten; "
                                  "ask its owner to chmod 600 it, or set RAY_AUTH_TOKEN_PATH to a file of your own")
            path.chmod(stat.S_IRUSR | stat.S_IWUSR)
        return path
    with os.fdopen(fd, "w") as out:
        out.write(secrets.token_hex(32))  # 256 bits, as Ray's own generator
    return path


def private_temp_dir() -> Path:
    """The local Ray's temporary folder: <tmp>/informer-lab-ray-<uid>, created 0700; refused when it exists and is
    not this user's, tightened when it is ours but looser. Short, as Ray's socket paths must stay under 107 bytes."""
    import tempfile

    root = Path(os.environ.get("RAY_TMPDIR") or tempfile.gettempdir())
    path = root / f"informer-lab-ray-{os.getuid()}"
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        info = path.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            raise ConfigError(f"{path} exists and is not a folder of yours: remove it, or set RAY_TMPDIR to a folder "
                              "of your own") from None
        if info.st_mode & 0o077:
            path.chmod(stat.S_IRWXU)
    except OSError as err:
        raise ConfigError(f"cannot make Ray's temporary folder {path}: {err.strerror or err}") from None
    return path


def ray_temp_dir() -> Path:
    """The folder Ray is given: `ray/` inside the private one (Ray makes it 0777; the private one above stays 0700)."""
    return private_temp_dir() / "ray"


def tighten(folder: Path) -> int:
    """Every folder under `folder` (itself included) that is this user's, mode 0700 again; → how many were looser.
    Links are not followed; a folder Ray removes meanwhile is skipped."""
    loose = 0
    for root, dirs, _ in os.walk(folder):
        for path in [root, *(os.path.join(root, d) for d in dirs)]:
            try:
                info = os.lstat(path)
                if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and info.st_mode & 0o077:
                    os.chmod(path, stat.S_IRWXU)
                    loose += 1
            except OSError:
                continue
    return loose


@contextlib.contextmanager
def _no_dashboard_head(skip: bool):
    """While the local Ray starts: without its dashboard head process when `skip` (Ray starts one even with
    include_dashboard=False; the study reads nothing from it)."""
    from ray._private.node import Node

    original = Node.start_api_server
    if skip:
        Node.start_api_server = lambda self, **kwargs: None
    try:
        yield
    finally:
        Node.start_api_server = original


def _reset_token_cache() -> None:
    import sys

    if "ray" in sys.modules:
        from ray._raylet import AuthenticationTokenLoader

        AuthenticationTokenLoader.instance().reset_cache()


@contextlib.contextmanager
def _loopback_node():
    """Ray's single-machine mode while the local Ray starts: the node address is 127.0.0.1. The processes it starts
    keep the variable; this process's module constant is restored afterwards (it only decides the node address)."""
    from ray._private import ray_constants

    before_env, before_const = os.environ.get(LOOPBACK_ENV), ray_constants.ENABLE_RAY_CLUSTER
    os.environ[LOOPBACK_ENV] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = before_const
        if before_env is None:
            os.environ.pop(LOOPBACK_ENV, None)
        else:
            os.environ[LOOPBACK_ENV] = before_env


DASHBOARD_PACKAGES = ("aiohttp", "aiohttp_cors", "opencensus", "prometheus_client")  # what ray[default] adds


def check_dashboard() -> None:
    """ConfigError naming the install when Ray's dashboard cannot start (its packages come with ray[default]); Ray
    itself fails at the dashboard's first import with a traceback, after starting everything else."""
    import importlib.util

    missing = [name for name in DASHBOARD_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(f"--dashboard needs Ray's dashboard packages ({', '.join(missing)} missing): "
                          "pip install 'ray[default]==2.60.0', or run the study without --dashboard")


def start_local(num_cpus: int | None, *, env_vars: dict | None = None, dashboard: bool = False):
    """A Ray of this process's own on loopback with token authentication; returns the ray module."""
    if dashboard:
        check_dashboard()
    secure_token_file()
    import ray
    from ray._private.authentication.authentication_token_setup import _enable_token_auth

    _enable_token_auth()  # RAY_AUTH_MODE=token, and Ray's cached config re-read (ray may be imported already)
    _reset_token_cache()
    last, temp_dir = "", ray_temp_dir()
    for attempt in range(1, START_TRIES + 1):
        try:
            with _loopback_node(), _no_dashboard_head(not dashboard):
                ray.init(address="local", num_cpus=num_cpus or os.cpu_count() or 1, include_dashboard=dashboard,
                         dashboard_host="127.0.0.1", log_to_driver=False, configure_logging=False,
                         runtime_env={"env_vars": dict(env_vars or {})}, _temp_dir=str(temp_dir))
            tighten(temp_dir)  # Ray made its session folders 0777; the private folder above kept them ours anyway
            return ray
        except KeyboardInterrupt:
            _shutdown_quietly(ray)
            raise
        except Exception as err:  # noqa: BLE001  Ray's start-up failures are plain Exceptions
            last = " ".join(str(err).split())[:160] or type(err).__name__
            _shutdown_quietly(ray)
            log.warning("the local Ray did not start (try %d of %d): %s", attempt, START_TRIES, last)
    raise ConfigError(f"the study's local Ray did not start in {START_TRIES} tries ({last}): the machine may be too "
                      "busy; stop other work or give fewer --cpus, then run the same command again")


def _shutdown_quietly(ray) -> None:
    """Stop whatever a failed ray.init started (its own processes only)."""
    try:
        ray.shutdown()
    except Exception:  # noqa: BLE001  nothing more can be done about a half-started Ray
        log.debug("ray.shutdown after a failed start raised", exc_info=True)


def _is_loopback(host: str) -> bool:
    import ipaddress

    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _gcs_address(address: str) -> str | None:
    """HOST:PORT of the cluster's GCS for `address` (auto: the one Ray's temporary folder or RAY_ADDRESS names);
    None for a Ray Client address (ray://), which is checked by Ray itself. A loopback HOST is kept as it is (Ray
    would turn it into the LAN address, where a loopback-only Ray does not listen)."""
    if address.startswith("ray://"):
        return None
    host, _, port = address.rpartition(":")
    if host and port.isdigit() and _is_loopback(host):
        return address
    from ray._private import services

    try:
        found = services.canonicalize_bootstrap_address(address)
    except Exception as err:  # noqa: BLE001  Ray's own words for a malformed or unknown address
        raise ConfigError(f"--address {address!r}: {err}") from None
    if found is None:
        raise ConfigError(f"--address {address!r} names no running Ray cluster (start one with `ray start --head`, "
                          "or leave --address out for a local Ray of the study's own)")
    return found


def check_cluster(address: str) -> None:
    """Refuse at once a cluster that does not answer or does not take this machine's Ray token."""
    gcs = _gcs_address(address)
    if gcs is None:
        return
    host, _, port = gcs.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_SECONDS).close()
    except (OSError, ValueError):
        raise ConfigError(f"no Ray cluster answers at {gcs} (--address {address}) within {CONNECT_SECONDS:.0f} s; "
                          "check the address and that its port is open to this machine") from None
    from ray._private.authentication.authentication_token_setup import maybe_enable_token_auth_if_token_available
    from ray._raylet import GcsClient
    from ray.exceptions import AuthenticationError

    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    _reset_token_cache()
    try:
        GcsClient(address=gcs)
    except AuthenticationError:
        raise ConfigError(f"the Ray cluster at {gcs} refused this machine's Ray token: use the cluster's token "
                          f"(RAY_AUTH_TOKEN, or the file {token_path()} as on the cluster's head node)") from None
    except Exception as err:  # noqa: BLE001  anything else: say it in one line
        raise ConfigError(f"the Ray cluster at {gcs} did not answer as a Ray cluster: {str(err)[:160]}") from None


def join(address: str, *, runtime_env: dict):
    """Join the cluster at `address` after check_cluster; returns the ray module. A Ray on this machine's loopback
    (a study's own, or `ray start --node-ip-address 127.0.0.1`) is joined in Ray's single-machine mode."""
    gcs = _gcs_address(address)
    check_cluster(address)
    import ray

    local = gcs is not None and _is_loopback(gcs.rpartition(":")[0])
    with _loopback_node() if local else contextlib.nullcontext():
        ray.init(address=gcs or address, runtime_env=runtime_env, log_to_driver=False)
    return ray


__all__ = ["check_cluster", "check_dashboard", "join", "private_temp_dir", "ray_temp_dir", "secure_token_file",
           "start_local", "tighten", "token_path"]
