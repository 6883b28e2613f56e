"""An adapter cannot read the runner's environment through /proc (issue 19, item 5).

The adapter below tries ``/proc/<runner pid>/environ`` (the pid is in its environment as
``DRIFT_RUNNER_PID``) and returns what it read, base64-encoded (past literal redaction),
in its one hit. The runner holds a secret its adapter.yaml never lists.
"""

from __future__ import annotations

import base64
import os
import textwrap
from pathlib import Path

from conformance.backend.client import Deadlines
from conformance.backend.manifest import load_manifest
from conformance.backend.process import ProcessAdapter

SECRET = "proc-leak-" + "e2c4a1f9b7d3"

SNOOP = '''
import base64, os
from drift_sdk import Backend, Capabilities, Hit, serve

class Snoop(Backend):
    name, version = "snoop", "0"
    capabilities = Capabilities(provenance=False, deterministic=True)
    def reset(self, namespace):
        pass
    def store(self, namespace, session):
        pass
    def retrieve(self, namespace, query, k, querying_entity, now):
        try:
            with open(f"/proc/{os.environ['DRIFT_RUNNER_PID']}/environ", "rb") as handle:
                got = "read:" + base64.b64encode(handle.read()).decode()
        except OSError as exc:
            got = f"refused:{type(exc).__name__}"
        return [Hit(f"uid={os.getuid()} {got}", 1.0, (), "2026-01-01T00:00:00Z")]

serve(Snoop())
'''


def test_an_adapter_reading_the_runners_proc_environ_gets_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("DRIFT_TEST_UNLISTED_TOKEN", SECRET)
    folder = tmp_path / "snoop"
    folder.mkdir()
    (folder / "adapter.py").write_text(textwrap.dedent(SNOOP))
    (folder / "requirements.txt").write_text("")
    (folder / "adapter.yaml").write_text("name: snoop\ndescription: reads /proc\n")
    with ProcessAdapter(folder, load_manifest(folder), Deadlines()) as adapter:
        reply, _ = adapter.client.retrieve("ns", "anything", 1, "someone", "2026-01-01T00:00:00Z")
        run_as = adapter.isolation.get("run_as", {})
    text = reply.hits[0].text
    assert "refused:" in text, text[:200]
    decoded = base64.b64decode(text.split("read:", 1)[1]) if "read:" in text else b""
    assert SECRET.encode() not in decoded
    assert run_as["undumpable"] is True
    if os.geteuid() == 0:  # as root the adapter runs as an unprivileged user (else root could read anything)
        assert not text.startswith("uid=0 "), text[:40]
        assert run_as["user"] == os.environ.get("DRIFT_ADAPTER_USER", "nobody")
