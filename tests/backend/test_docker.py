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
import textwrap
import time
from pathlib import Path

import pytest

from conformance.backend.docker_adapter import (
    REFERENCE_CPUS,
    REFERENCE_MEMORY_GB,
    RUNNER_LABEL,
    clamp_limits,
    requested_limits,
    sweep_orphans,
)
from conformance.backend.images import (
    INPUTS_LABEL,
    DockerUnavailable,
    ImageBuildError,
    connect,
    context_files,
    ensure_image,
    image_name,
    inputs_hash,
)
from conformance.backend.manifest import AdapterManifest, load_manifest
from conformance.backend.process import AdapterStartError
from conformance.paths import adapters_dir
from conformance.runner.systems import AdapterSpecError, open_system, plan_adapter

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
    """The none and keyword images, each built (or reused) and then asked for again."""
    out = {}
    for name in ("none", "keyword"):
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
def test_keyword_in_a_container_answers_exactly_as_in_process_mode(engine, images, tmp_path):
    runs = {}
    for mode, spec in (("docker", "keyword:latest"), ("process", "keyword")):
        out = tmp_path / f"{mode}.json"
        started = time.monotonic()
        proc = cli("--adapter", spec, "--scenario", "ua-short-002", "--out", str(out), "--quiet",
                   "--records-dir", str(tmp_path / "runs"), cwd=tmp_path)
        print(f"{spec}: ua-short-002 in {time.monotonic() - started:.1f} s")
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(out.read_text())
        records = [json.loads(line) for line in Path(doc["receipt"]["config"]["records"]).read_text().splitlines()]
        answers = [(r["probe_id"], r["answer"], [h.get("source_ids") for h in r["hits"]])
                   for r in records if r["kind"] == "probe" and r["system"] == "keyword"]
        runs[mode] = (doc, answers)

    docker_doc, docker_answers = runs["docker"]
    process_doc, process_answers = runs["process"]
    assert docker_answers and docker_answers == process_answers
    assert (docker_doc["systems"]["keyword"]["metrics"]["accuracy"]["value"]
            == process_doc["systems"]["keyword"]["metrics"]["accuracy"]["value"])
    isolation = docker_doc["receipt"]["isolation"]["keyword"]
    assert isolation["mode"] == "docker" and isolation["image"] == "drift-adapter-keyword:latest"
    assert isolation["image_id"] == images["keyword"][0].image_id
    assert isolation["limits"]["cpus"] == 1 and isolation["limits"]["memory_gb"] == 2
    assert isolation["bind"].startswith("127.0.0.1:") and isolation["mounts"] == []
    assert docker_doc["receipt"]["isolation"]["none"]["mode"] == "process", "only keyword:latest asked for docker"
    assert process_doc["receipt"]["isolation"]["keyword"]["mode"] == "process"
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
        assert "was killed by signal SIGKILL" in report and "serving on port 50051" in report, report
    finally:
        system.close()
    assert our_containers(engine) == []


CRASHY = '''
import os, sys, time
mode = os.environ.get("DRIFT_TEST_MODE", "exit")
print("CANARY-CONTAINER-LOG env=" + ",".join(sorted(os.environ)), "cwd=" + ",".join(sorted(os.listdir("."))),
      file=sys.stderr, flush=True)
if mode == "sleep":
    time.sleep(120)
if mode == "oom":
    hog = [b"x" * (32 << 20) for _ in range(64)]  # 2 GiB, touched, against a 256 MiB limit
raise SystemExit(3)
'''


@pytest.fixture(scope="module")
def crashy(engine, base_image, tmp_path_factory):
    """An image whose adapter never serves: it exits 3, sleeps, or runs out of memory (DRIFT_TEST_MODE)."""
    folder = tmp_path_factory.mktemp("adapters") / "drift-test-crashy"
    folder.mkdir()
    (folder / "adapter.py").write_text(textwrap.dedent(CRASHY))
    (folder / "requirements.txt").write_text("")
    (folder / "adapter.yaml").write_text("name: drift-test-crashy\ndescription: never serves\nstartup_timeout_s: 3\n"
                                         "env: [DRIFT_TEST_MODE]\nresources: {cpus: 0.5, memory_gb: 0.25}\n")
    (folder / "Dockerfile").write_text("FROM python:3.11-slim\nCOPY adapter/ /adapter/\nWORKDIR /work\n"
                                       'CMD ["python", "/adapter/adapter.py"]\n')
    ensure_image(engine, folder, load_manifest(folder))
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("mode, expected", [
    ("exit", "exited with code 3"),
    ("sleep", "health not SERVING within 3 s"),
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
    try:
        assert sweep_orphans(engine) >= 1
        assert [c.id for c in our_containers(engine)] == [alive.id], "swept a live runner's container"
    finally:
        for c in (container, alive):
            try:
                c.remove(force=True)
            except Exception:
                pass
