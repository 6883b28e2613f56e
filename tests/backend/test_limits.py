"""Resource limits in process mode: cgroup detection, enforcement, OOM reporting, cleanup.

Tests that need writable cgroups skip with the reason the detection gives (it names
what it tried) on hosts where none are writable.
"""

import json
import os
import textwrap
from pathlib import Path

import pytest

from conformance.backend import limits as limits_mod
from conformance.backend.client import BackendCallError
from conformance.backend.limits import CPU_PERIOD_US, GIB, CgroupLimits, cpu_shares_v1, cpu_weight_v2, host_cpus
from conformance.contract.fixture import Message, Session
from conformance.backend.systems import open_system

T = "2026-01-01T00:00:00Z"


@pytest.fixture
def limits_on(monkeypatch):
    """A probe that creates and removes a cgroup pair; skips when nothing is enforceable."""
    monkeypatch.delenv(limits_mod.DISABLE_ENV, raising=False)
    probe = CgroupLimits.detect(cpus=1, memory_gb=1, label="probe")
    probe.cleanup()
    if probe.enforced_by == "none":
        pytest.skip(f"no writable cgroups here: {probe.reason}")
    return probe


def need_v1_cpu_and_memory(probe: CgroupLimits) -> None:
    if not (probe.enforced_by == "cgroup v1" and probe.cpu_enforced and probe.memory_enforced):
        pytest.skip(f"this test exercises cgroup v1 cpu + memory; here: {probe.reason}")


def make_adapter(root: Path, name: str, body: str, resources: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "adapter.py").write_text(textwrap.dedent(body))
    (folder / "requirements.txt").write_text("")  # the shared sdk-only virtualenv
    (folder / "adapter.yaml").write_text(f"name: {name}\ndescription: test adapter\nresources: {resources}\n")
    return folder


# ------------------------------------------------------------------ detection, no process


def test_detection_on_this_machine_enforces_something(limits_on):
    record = limits_on.describe()
    assert record["enforced_by"] in ("cgroup v2", "cgroup v1")
    assert record["requested"] == {"cpus": 1, "memory_gb": 1} and record["clamped"] is False
    assert record["reason"].startswith(record["enforced_by"])
    v2_controllers = [m.split()[4] for m in Path("/proc/self/mountinfo").read_text().splitlines()
                      if " - cgroup2 " in m]
    if v2_controllers and not {"cpu", "memory"} & set(Path(v2_controllers[0], "cgroup.controllers")
                                                      .read_text().split()):
        # a hybrid host like the CI machines: controllers bound to v1, so v1 enforces
        assert record["enforced_by"] == "cgroup v1" and "not cgroup v2" in record["reason"]
    assert not limits_on.created, "cleanup left cgroup directories"


def test_request_is_clamped_to_the_host(limits_on):
    big = CgroupLimits.detect(cpus=host_cpus() + 7, memory_gb=1e6, label="clamp")
    try:
        record = big.describe()
        assert record["clamped"] is True and record["requested"] == {"cpus": host_cpus() + 7, "memory_gb": 1e6}
        assert big.cpus == host_cpus() and big.memory_gb == record["host"]["memory_gb"] < 1e6
    finally:
        big.cleanup()


def test_cpu_quota_file_holds_the_request_and_cleanup_removes_the_dirs(limits_on):
    need_v1_cpu_and_memory(limits_on)
    lim = CgroupLimits.detect(cpus=0.5, memory_gb=0.25, label="quota")
    dirs = list(lim.created)
    try:
        assert lim.cpu_dir is not None and lim.memory_dir is not None and lim.cpu_dir != lim.memory_dir
        assert (lim.cpu_dir / "cpu.cfs_quota_us").read_text().strip() == str(CPU_PERIOD_US // 2)
        assert (lim.cpu_dir / "cpu.cfs_period_us").read_text().strip() == str(CPU_PERIOD_US)
        # half a CPU weighs half a task (1024 shares per CPU)
        assert (lim.cpu_dir / "cpu.shares").read_text().strip() == "512"
        assert lim.describe()["cpu_weight"] == {"file": "cpu.shares", "value": 512}
        assert int((lim.memory_dir / "memory.limit_in_bytes").read_text()) == GIB // 4
        # the memory cgroup is a child of the runner's OWN memory cgroup
        own = next(line.split(":", 2)[2] for line in Path("/proc/self/cgroup").read_text().splitlines()
                   if "memory" in line.split(":")[1].split(","))
        assert str(lim.memory_dir.parent).endswith(own.rstrip("/")) or own == "/"
    finally:
        assert lim.cleanup() == []
    assert dirs and not any(d.exists() for d in dirs)


def test_no_cgroups_env_records_none(monkeypatch):
    monkeypatch.setenv("DRIFT_NO_CGROUPS", "1")
    lim = CgroupLimits.detect(cpus=1, memory_gb=1, label="off")
    record = lim.describe()
    assert record["enforced_by"] == "none" and "DRIFT_NO_CGROUPS=1" in record["reason"]
    assert record["cpus"] is None and record["memory_gb"] is None and not lim.created
    assert lim.wrap(["python", "x"]) == ["python", "x"]


def test_v2_writes_cpu_max_and_memory_max(tmp_path, monkeypatch):
    # A fake unified hierarchy (plain files): checks what is written where, not the kernel.
    monkeypatch.delenv(limits_mod.DISABLE_ENV, raising=False)
    root = tmp_path / "cg"
    own = root / "runner"
    own.mkdir(parents=True)
    (own / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (own / "cgroup.subtree_control").write_text("cpu memory\n")
    (tmp_path / "cgroup").write_text("0::/runner\n")
    (tmp_path / "mountinfo").write_text(f"30 23 0:26 / {root} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n")
    monkeypatch.setattr(limits_mod, "PROC_SELF_CGROUP", tmp_path / "cgroup")
    monkeypatch.setattr(limits_mod, "PROC_SELF_MOUNTINFO", tmp_path / "mountinfo")
    real_write = limits_mod._write

    def write(path, value):  # the kernel's control files exist without O_CREAT; plain files do not
        path.touch()
        real_write(path, value)

    monkeypatch.setattr(limits_mod, "_write", write)
    lim = CgroupLimits.detect(cpus=1.5, memory_gb=0.5, label="v2")
    assert lim.enforced_by == "cgroup v2", lim.reason
    child = lim.cpu_dir
    assert child == lim.memory_dir and child.parent == own
    assert (child / "cpu.max").read_text() == f"150000 {CPU_PERIOD_US}"
    assert (child / "cpu.weight").read_text() == "150"  # 1.5 CPUs weigh 1.5 default cgroups
    assert lim.describe()["cpu_weight"] == {"file": "cpu.weight", "value": 150}
    assert "weight 150 (cpu.weight)" in lim.reason
    assert (child / "memory.max").read_text() == str(GIB // 2)
    assert (child / "memory.swap.max").read_text() == "0" and lim.swap_limited is True
    assert lim.wrap(["python"])[-3:] == ["1", str(child / "cgroup.procs"), "python"]
    (child / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert lim.oom_kills() == 1 and lim.limit_hits() == 3


def test_cpu_weight_is_the_default_times_the_requested_cpus_within_the_kernels_bounds():
    # v2: 100 per CPU in [1, 10000]; v1: 1024 per CPU in [2, 262144] (by hand).
    assert [cpu_weight_v2(c) for c in (0.001, 0.5, 1, 2, 8, 200)] == [1, 50, 100, 200, 800, 10000]
    assert [cpu_shares_v1(c) for c in (0.001, 0.5, 1, 2, 8, 500)] == [2, 512, 1024, 2048, 8192, 262144]


def test_a_refused_weight_is_a_note_and_the_quota_stays(tmp_path, monkeypatch):
    monkeypatch.delenv(limits_mod.DISABLE_ENV, raising=False)
    root = tmp_path / "cg"
    own = root / "runner"
    own.mkdir(parents=True)
    (own / "cgroup.controllers").write_text("cpu memory\n")
    (own / "cgroup.subtree_control").write_text("cpu memory\n")
    (tmp_path / "cgroup").write_text("0::/runner\n")
    (tmp_path / "mountinfo").write_text(f"30 23 0:26 / {root} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n")
    monkeypatch.setattr(limits_mod, "PROC_SELF_CGROUP", tmp_path / "cgroup")
    monkeypatch.setattr(limits_mod, "PROC_SELF_MOUNTINFO", tmp_path / "mountinfo")
    real_write = limits_mod._write

    def write(path, value):
        if path.name == "cpu.weight":
            raise PermissionError(13, "Permission denied", str(path))
        path.touch()
        real_write(path, value)

    monkeypatch.setattr(limits_mod, "_write", write)
    lim = CgroupLimits.detect(cpus=2, memory_gb=0.5, label="v2w")
    assert lim.cpu_enforced and lim.cpu_weight is None and lim.describe()["cpu_weight"] is None
    assert "cpu.weight not written" in lim.reason and (lim.cpu_dir / "cpu.max").read_text() == f"200000 {CPU_PERIOD_US}"


# ------------------------------------------------------------------ real adapters

CGROUP_PROBE = '''
import json
from drift_sdk import Backend, serve

CGROUPS = open("/proc/self/cgroup").read()  # read before anything else runs

class Probe(Backend):
    name, version = "cgprobe", "0"
    def settings(self):
        return {"cgroups": CGROUPS}
    def reset(self, namespace): pass

serve(Probe())
'''

HOG = '''
from drift_sdk import Backend, serve

class Hog(Backend):
    name, version = "hog", "0"
    def reset(self, namespace): pass
    def store(self, namespace, session):
        hoard = []
        for _ in range(16):  # ~1 GiB, every page written
            hoard.append(bytearray(b"x") * (64 << 20))
        return None

serve(Hog())
'''


@pytest.mark.slow
def test_adapter_starts_inside_its_cgroups_and_they_go_away(tmp_path, limits_on):
    folder = make_adapter(tmp_path, "cgprobe", CGROUP_PROBE, "{cpus: 0.5, memory_gb: 0.5}")
    system = open_system(str(folder))
    try:
        lim = system.process.limits
        record = system.isolation["limits"]
        assert record["enforced_by"] == limits_on.enforced_by
        assert record["requested"] == {"cpus": 0.5, "memory_gb": 0.5} and record["clamped"] is False
        dirs = list(lim.created)
        seen = system.describe["settings"]["cgroups"]
        for d in dirs:
            assert d.name in seen, f"adapter was not in {d} when it started:\n{seen}"
            assert str(system.process.proc.pid) in (d / "cgroup.procs").read_text().split()
        if lim.cpu_enforced and lim.enforced_by == "cgroup v1":
            assert record["cpus"] == 0.5
            assert (lim.cpu_dir / "cpu.cfs_quota_us").read_text().strip() == "50000"
    finally:
        system.close()
    assert dirs and not any(d.exists() for d in dirs), "cgroup directories outlived the adapter"


@pytest.mark.slow
def test_out_of_memory_is_reported_as_such(tmp_path, limits_on):
    if not limits_on.memory_enforced:
        pytest.skip(f"no memory limit enforceable here: {limits_on.reason}")
    folder = make_adapter(tmp_path, "hog", HOG, "{cpus: 1, memory_gb: 0.25}")
    system = open_system(str(folder))
    try:
        record = system.isolation["limits"]
        assert record["memory_gb"] == 0.25 and record["enforced_by"] == limits_on.enforced_by
        session = Session(session_id="s0", index=0, time=T, participants=["u"],
                          messages=[Message(message_id="m0", author="u", role="user", text="hi", timestamp=T)])
        with pytest.raises(BackendCallError) as err:
            system.store("ns", session)
        report = system.died()
        assert report is not None, f"adapter survived allocating 1 GiB under a 0.25 GB limit; Store said: {err.value}"
        assert "ran out of memory: killed by the kernel for exceeding its memory limit of 0.25 GB" in report, report
        assert "exited with code" not in report
    finally:
        system.close()
    assert system.process.limits.oom_kills() >= 1
    assert not system.process.limits.created


@pytest.mark.slow
def test_isolation_record_without_cgroups(tmp_path, monkeypatch):
    monkeypatch.setenv("DRIFT_NO_CGROUPS", "1")
    folder = make_adapter(tmp_path, "cgprobe", CGROUP_PROBE, "{cpus: 1, memory_gb: 1}")
    system = open_system(str(folder))
    try:
        record = system.isolation["limits"]
        assert record["enforced_by"] == "none" and "DRIFT_NO_CGROUPS" in record["reason"]
        assert "drift-cgprobe" not in system.describe["settings"]["cgroups"]
        json.dumps(system.isolation)  # goes into the receipt as is
    finally:
        system.close()


@pytest.mark.slow
def test_a_plain_kill_is_not_called_out_of_memory(tmp_path):
    import signal

    folder = make_adapter(tmp_path, "cgprobe", CGROUP_PROBE, "{cpus: 1, memory_gb: 1}")
    system = open_system(str(folder))
    try:
        os.kill(system.process.proc.pid, signal.SIGKILL)
        system.process.proc.wait(timeout=10)
        report = system.died()
        assert "was killed by signal SIGKILL" in report and "memory" not in report, report
    finally:
        system.close()


def test_cgroups_left_by_a_killed_runner_are_swept(limits_on):
    import subprocess
    import sys

    first = CgroupLimits.detect(cpus=1, memory_gb=1, label="sweep")
    parents = {d.parent for d in first.created}
    first.cleanup()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid that no longer exists, like a SIGKILLed runner's
    stale = [p / f"drift-sweep-{gone.pid}-abcdef" for p in parents]
    for d in stale:
        d.mkdir()
    second = CgroupLimits.detect(cpus=1, memory_gb=1, label="sweep")
    try:
        assert not any(d.exists() for d in stale)
    finally:
        second.cleanup()
        for d in stale:
            if d.exists():
                d.rmdir()
