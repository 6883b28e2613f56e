"""--fresh-process: a new adapter process per scenario, so nothing learnt crosses scenarios.

An adapter that logs its pid at every Reset shows one process for the whole run by default,
and one process per scenario with --fresh-process (the default of published runs, holdout
included); the receipt records which. It cannot be combined with --concurrency.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conformance.backend.privilege import share_with_adapters
from conformance.runner.job import JobError, run_job
from conformance.contract.corpus import Selection

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = ("ua-short-001", "ua-short-002", "crw-short-002")

PIDS = '''
import os
from drift_sdk import Backend, Capabilities, serve

class Pids(Backend):
    name, version = "pids", "0"
    capabilities = Capabilities(provenance=True, deterministic=True)
    def reset(self, namespace):
        with open({log!r}, "a") as out:
            out.write(f"{{os.getpid()}} {{namespace.rsplit('/', 1)[-1]}}\\n")
    def store(self, namespace, session):
        return None
    def retrieve(self, namespace, query, k, querying_entity, now):
        return []

serve(Pids())
'''


def pids_adapter(tmp_path: Path) -> tuple[str, Path]:
    # the adapter may run as an unprivileged user (a root runner): it writes its log there
    log = share_with_adapters(tmp_path / "logs") / "resets.log"
    folder = tmp_path / "pids"
    folder.mkdir()
    (folder / "adapter.py").write_text(textwrap.dedent(PIDS.format(log=str(log))))
    (folder / "requirements.txt").write_text("")
    (folder / "adapter.yaml").write_text("name: pids\ndescription: logs its pid\nstartup_timeout_s: 60\n")
    return str(folder), log


def processes(log: Path) -> dict[str, str]:
    return {scenario: pid for pid, scenario in (line.split() for line in log.read_text().splitlines())}


def test_one_process_by_default_and_one_per_scenario_when_fresh(tmp_path):
    spec, log = pids_adapter(tmp_path)
    doc = run_job([spec], REPO / "fixtures", REPO / "gold", selection=Selection(patterns=SCENARIOS),
                  records_dir=tmp_path / "a", n_boot=100)
    assert len(set(processes(log).values())) == 1 and doc.receipt.config["fresh_process"] is False
    log.unlink()
    doc = run_job([spec], REPO / "fixtures", REPO / "gold", selection=Selection(patterns=SCENARIOS),
                  records_dir=tmp_path / "b", n_boot=100, fresh_process=True)
    seen = processes(log)
    assert sorted(seen) == sorted(SCENARIOS) and len(set(seen.values())) == len(SCENARIOS)
    assert doc.receipt.config["fresh_process"] is True and doc.complete
    # the restarted adapters are still scored like the others (same denominators)
    assert doc.systems["pids"].metrics["accuracy"].n == doc.systems["none"].metrics["accuracy"].n


def test_published_runs_default_to_fresh_processes(tmp_path):
    spec, log = pids_adapter(tmp_path)
    doc = run_job([spec], REPO / "fixtures", REPO / "gold",
                  selection=Selection(patterns=SCENARIOS[:2], include_holdout=True), records_dir=tmp_path / "r",
                  n_boot=100)
    assert doc.receipt.config["fresh_process"] is True and len(set(processes(log).values())) == 2


def test_fresh_processes_refuse_concurrency(tmp_path):
    with pytest.raises(JobError, match="--concurrency 1 or --no-fresh-process"):
        run_job(["keyword"], REPO / "fixtures", REPO / "gold", selection=Selection(patterns=SCENARIOS),
                records_dir=tmp_path / "r", n_boot=100, fresh_process=True, concurrency=2)
