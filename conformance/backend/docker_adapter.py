"""Docker isolation: an adapter as a container of its image ``drift-adapter-NAME:TAG``.

:class:`DockerAdapter` has the interface of :class:`~conformance.backend.process.ProcessAdapter`
as the runner uses it (``start()``, ``client``, ``isolation``, ``exit_report()``, ``stop()``).
The container:

- runs detached with CPU and memory limits (``nano_cpus``; ``mem_limit`` = ``memswap_limit``,
  so swap cannot extend it): the adapter's ``resources`` from adapter.yaml, or DRIFT's
  reference host (8 CPUs, 32 GiB) when it names none, clamped to what the engine's host has;
  ``isolation["limits"]`` records the request, the host and the clamp; at most
  :data:`PIDS_LIMIT` processes and threads;
- runs as a user other than root (:func:`container_user`) on a read-only root filesystem;
  it can write only to two tmpfs, ``/work`` (its working folder and ``HOME``, with
  ``XDG_CACHE_HOME`` under it) and ``/tmp``, both counted against its memory limit;
- has no network but its own loopback (``network_mode="none"``: no route, no DNS, no other
  container, not the host); an adapter whose adapter.yaml says ``network: outbound`` (or
  whose ``outbound_when_set`` variable is set) instead sits alone on a private bridge made
  for it, with a default route; either way no port is published;
- is reached over a gRPC unix socket, ``/run/drift/backend.sock`` inside, in a folder of
  the runner's bind-mounted there: the only mount, holding neither fixtures nor gold, and
  the one place outside tmpfs it can write (its size is not limited);
- gets only the environment variables adapter.yaml lists under ``env``, besides the
  address, ``HOME``, ``TMPDIR`` and ``XDG_CACHE_HOME``;
- drops every capability and cannot gain privileges;
- must answer health SERVING within ``startup_timeout_s``; a crash or a timeout raises
  :class:`AdapterStartError` ending with the container's last log lines;
- is force-removed in :meth:`DockerAdapter.stop` (the runner calls it in ``finally``), and
  containers, networks and socket folders left by a runner that was killed are removed by
  the next one on this host.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import tempfile
import time
from pathlib import Path

from conformance.backend.client import BackendClient, Deadlines
from conformance.backend.images import LABEL_PREFIX, AdapterImage, connect
from conformance.backend.manifest import AdapterManifest
from conformance.backend.process import AdapterStartError, adapter_environment

#: Inside the container: the folder of the gRPC unix socket (the runner's, bind-mounted) and the socket.
SOCKET_DIR = "/run/drift"
SOCKET_NAME = "backend.sock"
#: The container's working folder and HOME, a tmpfs (the Dockerfiles' WORKDIR).
WORKDIR = "/work"
#: Processes and threads a container may hold: far above what an adapter runs (gRPC's pool,
#: onnxruntime's threads), far below what a fork bomb needs.
PIDS_LIMIT = 256
#: The user a container runs as when the runner is root (a runner that is not root lends its
#: own uid:gid, so that it can reach the socket the adapter makes).
UNPRIVILEGED_UID = 10001
#: Values of an ``outbound_when_set`` variable that leave the network closed.
_OFF = {"", "0", "false", "no", "off"}
#: DRIFT §7.8's reference host: the limits of an adapter whose adapter.yaml names no ``resources``.
REFERENCE_CPUS, REFERENCE_MEMORY_GB = 8.0, 32.0
#: Every container and network this module makes carries this label (value: the runner, host:pid).
RUNNER_LABEL = f"{LABEL_PREFIX}.runner"
#: Socket folders are ``$TMPDIR/drift-sock-<runner pid>-<random>``: a killed runner's are swept.
SOCKET_PREFIX = "drift-sock-"
#: AF_UNIX paths are at most 107 bytes on Linux.
_MAX_SOCKET_PATH = 107
GIB = 1 << 30


def requested_limits(manifest: AdapterManifest) -> tuple[float, float, str]:
    """``(cpus, memory_gb, source)``: adapter.yaml's ``resources`` when it sets them, else the reference host."""
    if "resources" in manifest.model_fields_set:
        return manifest.resources.cpus, manifest.resources.memory_gb, "adapter.yaml resources"
    return REFERENCE_CPUS, REFERENCE_MEMORY_GB, "DRIFT reference host (adapter.yaml names no resources)"


def clamp_limits(cpus: float, memory_gb: float, host_cpus: int, host_memory_bytes: int) -> dict:
    """The limits a container gets: the request, clamped to the host. Pure.

    Returns ``{"requested": {cpus, memory_gb}, "host": {cpus, memory_gb}, "cpus", "memory_gb",
    "nano_cpus", "memory_bytes", "clamped"}`` (memory in GiB = 2**30 bytes; ``nano_cpus`` in
    1e-9 CPUs, as the Docker API takes it).
    """
    host_gib = host_memory_bytes / GIB
    got_cpus = min(float(cpus), float(host_cpus))
    memory_bytes = min(int(memory_gb * GIB), int(host_memory_bytes))
    return {"requested": {"cpus": cpus, "memory_gb": memory_gb},
            "host": {"cpus": host_cpus, "memory_gb": round(host_gib, 2)},
            "cpus": got_cpus, "memory_gb": round(memory_bytes / GIB, 2),
            "nano_cpus": int(round(got_cpus * 1e9)), "memory_bytes": memory_bytes,
            "clamped": got_cpus < cpus or memory_bytes < int(memory_gb * GIB)}


def network_mode(manifest: AdapterManifest, environ) -> tuple[str, str]:
    """``("none" | "outbound", why)``: what the adapter's container may reach this run. Pure.

    ``outbound`` when adapter.yaml says ``network: outbound``, or when a variable of its
    ``outbound_when_set`` is set in ``environ`` to anything but empty, 0, false, no or off.
    """
    if manifest.network == "outbound":
        return "outbound", "adapter.yaml network: outbound"
    switched = [name for name in manifest.outbound_when_set
                if (environ.get(name) or "").strip().lower() not in _OFF]
    if switched:
        return "outbound", f"{', '.join(switched)} set (adapter.yaml outbound_when_set)"
    return "none", "adapter.yaml network: none" if "network" in manifest.model_fields_set else \
        "default (adapter.yaml names no network)"


def container_user(uid: int, gid: int) -> tuple[int, int]:
    """``(uid, gid)`` the container runs as: never root. Pure.

    A root runner reaches any socket, so the container gets :data:`UNPRIVILEGED_UID`; a runner
    that is not root can connect only to a socket it may write, so the container runs as the
    runner's own ids (no user namespace: the same ids on both sides).
    """
    return (UNPRIVILEGED_UID, UNPRIVILEGED_UID) if uid == 0 else (uid, gid)


def _runner_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_orphans(client, log=None) -> int:
    """Remove containers and networks of runners on this host that are gone (killed: no ``finally``).

    Returns how many containers were removed.
    """
    import docker

    host = socket.gethostname()
    removed = 0

    def orphan(labels: dict) -> bool:
        owner = (labels or {}).get(RUNNER_LABEL, "")
        owner_host, _, pid = owner.rpartition(":")
        return owner_host == host and pid.isdigit() and not _alive(int(pid))

    for container in client.containers.list(all=True, filters={"label": RUNNER_LABEL}):
        if orphan(container.labels):
            try:
                container.remove(force=True)
                removed += 1
            except docker.errors.NotFound:
                pass
    for network in client.networks.list(filters={"label": RUNNER_LABEL}):
        if orphan(network.attrs.get("Labels")):
            try:
                network.remove()
            except docker.errors.APIError:
                pass  # still in use by a container being removed by someone else
    for folder in Path(tempfile.gettempdir()).glob(f"{SOCKET_PREFIX}*-*"):
        pid = folder.name[len(SOCKET_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)) and folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder, ignore_errors=True)
    if removed and log:
        log(f"removed {removed} adapter container(s) left by a runner that was killed")
    return removed


class DockerAdapter:
    """Start, watch and stop one adapter container. Use as a context manager.

    ``address``, ``client`` and ``isolation`` are set once :meth:`start` returns.
    """

    def __init__(self, image: AdapterImage, deadlines: Deadlines = Deadlines(), log=None, docker_client=None):
        self.image, self.manifest, self.deadlines, self.log = image, image.manifest, deadlines, log
        self.docker = docker_client
        self.container = None
        self.network = None
        self.socket_dir: Path | None = None
        self.client: BackendClient | None = None
        self.address: str | None = None
        self.limits: dict = {}
        self.isolation: dict = {}

    def start(self) -> "DockerAdapter":
        """Run the container, wait for health SERVING.

        Raises:
            DockerUnavailable: no engine answers.
            AdapterStartError: the engine refused the container, the container exited, or it did
                not serve within ``startup_timeout_s``.
        """
        import docker

        name = self.manifest.name
        self.docker = self.docker or connect()
        try:
            sweep_orphans(self.docker, self.log)
            info = self.docker.info()
            cpus, memory_gb, source = requested_limits(self.manifest)
            self.limits = clamp_limits(cpus, memory_gb, int(info.get("NCPU") or os.cpu_count() or 1),
                                       int(info.get("MemTotal") or 0) or int(memory_gb * GIB))
            if self.limits["clamped"] and self.log:
                self.log(f"adapter {name} asks for {cpus:g} cpus and {memory_gb:g} GiB; the Docker host has "
                         f"{self.limits['host']['cpus']} cpus and {self.limits['host']['memory_gb']:g} GiB: "
                         f"limited to {self.limits['cpus']:g} cpus and {self.limits['memory_gb']:g} GiB")
            suffix = secrets.token_hex(4)
            labels = {RUNNER_LABEL: _runner_id(), f"{LABEL_PREFIX}.adapter": name}
            network, why = network_mode(self.manifest, os.environ)
            uid, gid = container_user(os.getuid(), os.getgid())
            self._make_socket_dir(uid, gid)
            options = self._options(uid, gid)
            if network == "outbound":
                # Alone on its own bridge: the default route, but no other container (another
                # system under test) is reachable.
                self.network = self.docker.networks.create(
                    f"drift-{name}-{suffix}", driver="bridge", labels=labels,
                    options={"com.docker.network.bridge.enable_icc": "false"})
                options["network"] = self.network.name
                if self.log:
                    self.log(f"adapter {name}: its container may open outbound connections ({why})")
            else:
                options["network_mode"] = "none"
            handed = adapter_environment(self.manifest)
            passed = sorted(handed)
            options["environment"] = {**handed, **options["environment"]}
            self.container = self.docker.containers.run(self.image.image_id, detach=True,
                                                        name=f"drift-{name}-{suffix}", labels=labels, **options)
            self.isolation = self._record(info, source, passed, network, why, uid, gid)
            self._wait_until_serving()
        except docker.errors.APIError as exc:
            self.stop()
            raise AdapterStartError(f"adapter {name}: the Docker engine refused to start "
                                    f"{self.image.name}: {exc.explanation or exc}") from None
        except BaseException:
            self.stop()  # never leave a half-started container behind
            raise
        return self

    def _make_socket_dir(self, uid: int, gid: int) -> None:
        self.socket_dir = Path(tempfile.mkdtemp(prefix=f"{SOCKET_PREFIX}{os.getpid()}-"))
        if len(str(self.socket_path)) > _MAX_SOCKET_PATH:
            raise AdapterStartError(f"adapter {self.manifest.name}: the socket path {self.socket_path} is longer "
                                    f"than {_MAX_SOCKET_PATH} bytes; point TMPDIR at a shorter folder")
        if os.getuid() == 0:
            os.chown(self.socket_dir, uid, gid)  # the container's user creates its socket here

    @property
    def socket_path(self) -> Path:
        """The adapter's gRPC unix socket, on the runner's side."""
        return self.socket_dir / SOCKET_NAME

    def _options(self, uid: int, gid: int) -> dict:
        """``containers.run`` keywords: limits, user, read-only root, tmpfs, the socket mount."""
        import docker

        memory = self.limits["memory_bytes"]
        # tmpfs pages count against the memory limit; the size caps each at the same figure.
        scratch = f"rw,nosuid,nodev,size={memory},uid={uid},gid={gid}"
        return {"user": f"{uid}:{gid}", "read_only": True, "tmpfs": {WORKDIR: scratch, "/tmp": scratch},
                "mounts": [docker.types.Mount(target=SOCKET_DIR, source=str(self.socket_dir), type="bind")],
                "environment": {"DRIFT_BACKEND_ADDRESS": f"unix:{SOCKET_DIR}/{SOCKET_NAME}", "HOME": WORKDIR,
                                "TMPDIR": "/tmp", "XDG_CACHE_HOME": f"{WORKDIR}/.cache", "PYTHONUNBUFFERED": "1"},
                "pids_limit": PIDS_LIMIT, "nano_cpus": self.limits["nano_cpus"], "mem_limit": memory,
                "memswap_limit": memory, "cap_drop": ["ALL"], "security_opt": ["no-new-privileges"]}

    def _record(self, info: dict, source: str, passed: list[str], network: str, why: str, uid: int,
                gid: int) -> dict:
        """The receipt's ``isolation`` entry, from what the engine reports about the container it made."""
        self.container.reload()
        host = self.container.attrs.get("HostConfig") or {}
        enforced = f"docker (cgroup v{info.get('CgroupVersion', '?')}, {info.get('CgroupDriver', '?')} driver)"
        not_enforced = [what for what, key in (("memory", "MemoryLimit"), ("cpu", "CpuCfsQuota"),
                                               ("pids", "PidsLimit")) if info.get(key) is False]
        return {
            "mode": "docker", "image": self.image.name, "image_id": self.image.image_id,
            "inputs_sha256": self.image.inputs_sha256, "image_built_now": self.image.built_now,
            "image_build_s": self.image.build_seconds, "container": self.container.short_id,
            "engine": info.get("ServerVersion"),
            "network": {"mode": network, "why": why, "docker": host.get("NetworkMode"),
                        "ports_published": sorted(host.get("PortBindings") or {})},
            "bind": f"unix:{self.socket_path}", "user": host.get("User") or f"{uid}:{gid}",
            "root_fs": "read-only" if host.get("ReadonlyRootfs") else "writable",
            "tmpfs": sorted(host.get("Tmpfs") or {}),
            "mounts": [{"source": m.get("Source"), "target": m.get("Target"), "read_only": bool(m.get("ReadOnly"))}
                       for m in host.get("Mounts") or []],
            "env_passed": passed,
            "limits": {"requested": self.limits["requested"], "source": source, "host": self.limits["host"],
                       "cpus": self.limits["cpus"], "memory_gb": self.limits["memory_gb"],
                       "pids": host.get("PidsLimit"), "clamped": self.limits["clamped"],
                       "swap": "none (memswap = memory)",
                       "enforced_by": enforced + (f"; the engine cannot limit {', '.join(not_enforced)}"
                                                  if not_enforced else "")}}

    def _wait_until_serving(self) -> None:
        timeout = self.manifest.startup_timeout_s
        deadline = time.monotonic() + timeout
        while not self.socket_path.exists():
            self._check_alive("while starting")
            if time.monotonic() > deadline:
                raise AdapterStartError(self._died(f"made no socket {SOCKET_DIR}/{SOCKET_NAME} within {timeout:g} s"))
            time.sleep(0.1)
        self.address = f"unix:{self.socket_path}"
        self.client = BackendClient(self.address, self.manifest.name, self.deadlines)
        while not self.client.serving():
            self._check_alive("before health said SERVING")
            if time.monotonic() > deadline:
                raise AdapterStartError(self._died(f"health not SERVING within {timeout:g} s"))
            time.sleep(0.1)

    def _state(self) -> dict:
        self.container.reload()
        return self.container.attrs.get("State") or {}

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.container.logs(stdout=True, stderr=True, tail=lines).decode("utf-8", "replace")
        except Exception as exc:  # the container may be gone already
            return f"    (no log: {exc})"
        tail = text.strip().splitlines()[-lines:]
        return "\n".join("    " + line for line in tail) or "    (empty)"

    def _died(self, what: str) -> str:
        return (f"adapter {self.manifest.name} (image {self.image.name}, container {self.container.short_id}) "
                f"{what}; last lines of its log:\n" + self.log_tail())

    def _how_it_ended(self, state: dict) -> str:
        code = state.get("ExitCode")
        if state.get("OOMKilled"):
            return (f"ran out of memory: killed by the kernel for exceeding its memory limit of "
                    f"{self.limits['memory_gb']:g} GiB (docker), exit status {code}")
        if isinstance(code, int) and code > 128:
            try:
                return f"was killed by signal {signal.Signals(code - 128).name} (exit status {code})"
            except ValueError:
                pass
        error = f" ({state['Error']})" if state.get("Error") else ""
        return f"exited with code {code}{error}"

    def _check_alive(self, when: str) -> None:
        state = self._state()
        if state.get("Status") in ("exited", "dead"):
            raise AdapterStartError(self._died(f"{self._how_it_ended(state)} {when}"))

    def exit_report(self) -> str | None:
        """If the container has stopped, why (out of memory, a signal, an exit code) and its log tail."""
        if self.container is None:
            return None
        try:
            state = self._state()
        except Exception as exc:
            return f"adapter {self.manifest.name}: its container {self.container.short_id} is gone ({exc})"
        if state.get("Status") in ("exited", "dead"):
            return self._died(self._how_it_ended(state))
        return None

    def stop(self) -> None:
        """Close the channel, force-remove the container and its network, remove the socket folder,
        close the engine connection. Safe to call twice."""
        if self.client is not None:
            self.client.close()
            self.client = None
        problems = []
        if self.container is not None:
            try:
                self.container.remove(force=True)
            except Exception as exc:
                if getattr(exc, "status_code", None) != 404:
                    problems.append(f"container {self.container.short_id}: {exc}")
        if self.network is not None:
            try:
                self.network.remove()
            except Exception as exc:
                if getattr(exc, "status_code", None) != 404:
                    problems.append(f"network {self.network.name}: {exc}")
        self.container = self.network = None
        if self.socket_dir is not None:
            shutil.rmtree(self.socket_dir, ignore_errors=True)
            self.socket_dir = None
        if self.docker is not None:
            self.docker.close()  # the adapter owns its engine connection
        if problems and self.log:
            # A killed runner's leftovers are swept by the next run; these are reported now.
            self.log(f"adapter {self.manifest.name}: could not remove {'; '.join(problems)}")

    def __enter__(self) -> "DockerAdapter":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
