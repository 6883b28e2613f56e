"""``check-adapter``: the contract checks, on the real adapters and on deliberately broken fakes.

The fakes are one small, correct backend (``GoodFake``) and subclasses that each break one
rule. They run in this process through ``InProcessTarget`` (fast), and two of them as real
adapter folders through the process launcher (a crash must be a crash of a process).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner

from conformance.backend.checks import (CHECKS, ClientTarget, InProcessTarget, Harness, check_k_honoured,
                                        made_up_words, run_checks, synthetic_corpus)
from conformance.cli.check_adapter import check_adapter_cmd
from conformance.backend.client import BackendCallError, BackendClient, Deadlines
from conformance.backend.manifest import CHECK_NAMES, ManifestError, load_manifest
from conformance.paths import adapters_dir
from drift_sdk import build_server

# The fakes, as source: exec'd here for in-process targets, written to adapter.py for the launcher.
FAKES = '''
import os
import random
import re
import time

from drift_sdk import Backend, Capabilities, Hit, MemoryItem, StoreResult

_WORD = re.compile(r"[a-z0-9]+")


class GoodFake(Backend):
    """Word-overlap search over every stored message; keeps every rule of the contract."""

    name, version = "good-fake", "1"
    capabilities = Capabilities(provenance=True, snapshot=True, forget=True, flush_signal=True, deterministic=True)

    def __init__(self):
        self.spaces = {}

    def _space(self, namespace):
        if not namespace:
            raise ValueError("empty namespace")
        if namespace not in self.spaces:
            raise ValueError(f"unknown namespace {namespace!r}: call Reset first")
        return self.spaces[namespace]

    def reset(self, namespace):
        if not namespace:
            raise ValueError("empty namespace")
        self.spaces[namespace] = []

    def store(self, namespace, session):
        space = self._space(namespace)
        for m in session.messages:
            space.append((m.message_id, f"{m.author}: {m.text}", m.timestamp))
        return StoreResult(items_stored=len(session.messages))

    def flush(self, namespace, timeout_s):
        self._space(namespace)
        return True

    def _docs(self, namespace):
        return self._space(namespace)

    def _ranked(self, namespace, query):
        words = set(_WORD.findall(query.lower()))
        scored = [(len(words & set(_WORD.findall(doc[1].lower()))), i, doc)
                  for i, doc in enumerate(self._docs(namespace))]
        return [(score, doc) for score, _, doc in sorted(scored, key=lambda x: (-x[0], x[1])) if score > 0]

    def _hit(self, score, doc):
        return Hit(doc[1], float(score), (doc[0],), doc[2])

    def retrieve(self, namespace, query, k, querying_entity, now):
        return [self._hit(score, doc) for score, doc in self._ranked(namespace, query)][:k]

    def snapshot(self, namespace):
        return [MemoryItem(doc[0], doc[1], (doc[0],), doc[2]) for doc in self._space(namespace)]

    def forget(self, namespace, source_ids):
        space = self._space(namespace)
        before = len(space)
        space[:] = [doc for doc in space if doc[0] not in set(source_ids)]
        return before - len(space)


class LeaksAcrossNamespaces(GoodFake):
    def _docs(self, namespace):
        self._space(namespace)
        return [doc for space in self.spaces.values() for doc in space]


class IgnoresK(GoodFake):
    def retrieve(self, namespace, query, k, querying_entity, now):
        return [self._hit(score, doc) for score, doc in self._ranked(namespace, query)]


class BogusProvenance(GoodFake):
    def _hit(self, score, doc):
        return Hit(doc[1], float(score), (doc[0], "ghost-" + doc[0]), doc[2])


class SnapshotRaises(GoodFake):
    def snapshot(self, namespace):
        raise RuntimeError("the snapshot writer is not wired up")


class Nondeterministic(GoodFake):
    def _hit(self, score, doc):
        return Hit(doc[1], float(score) + random.random() * 1e-6, (doc[0],), doc[2])


class CrashesOnBadInput(GoodFake):
    def store(self, namespace, session):
        if not namespace:
            os._exit(3)  # a real crash: the process is gone
        return super().store(namespace, session)


class ExitsOnBadInput(GoodFake):
    """In process, SystemExit plays the crashed process."""

    def store(self, namespace, session):
        if not namespace:
            raise SystemExit(3)
        return super().store(namespace, session)


class AcceptsAnything(GoodFake):
    def _space(self, namespace):
        return self.spaces.setdefault(namespace, [])


class ClaimsLittle(GoodFake):
    """Claims nothing optional and offers nothing optional: all of that is UNIMPLEMENTED."""

    capabilities = Capabilities()

    def snapshot(self, namespace):
        raise NotImplementedError("snapshot")

    def forget(self, namespace, source_ids):
        raise NotImplementedError("forget")


class AnswersUnclaimedSnapshot(ClaimsLittle):
    def snapshot(self, namespace):
        return GoodFake.snapshot(self, namespace)


class ForgetLies(GoodFake):
    def forget(self, namespace, source_ids):
        return len(source_ids)


class FlushNotReady(GoodFake):
    def flush(self, namespace, timeout_s):
        self._space(namespace)
        return False


class NoVersion(GoodFake):
    version = ""


class SlowSnapshot(GoodFake):
    def snapshot(self, namespace):
        time.sleep(0.3)
        return super().snapshot(namespace)
'''

fakes: dict = {}
exec(compile(FAKES, "<fakes>", "exec"), fakes)


class SilentErrors(fakes["GoodFake"]):
    """Refuses bad input with a status but no message (an adapter written against the proto can)."""

    def _space(self, namespace):
        if namespace not in self.spaces:
            raise BackendCallError(self.name, "call", grpc.StatusCode.INVALID_ARGUMENT, "")
        return self.spaces[namespace]


fakes["SilentErrors"] = SilentErrors


def results_of(fake: str, deadlines: Deadlines = Deadlines()) -> dict[str, tuple[str, str]]:
    results = run_checks(InProcessTarget(fakes[fake](), deadlines))
    assert [r.name for r in results] == list(CHECK_NAMES)
    return {r.name: (r.result, r.detail) for r in results}


def failing(results: dict) -> set[str]:
    return {name for name, (result, _) in results.items() if result == "FAIL"}


# ---- the corpus ----


def test_synthetic_corpus_is_stable_and_its_words_are_unique():
    a, b = synthetic_corpus("x"), synthetic_corpus("x")
    assert a == b
    words = [w for m in a.messages for w in m.words]
    assert len(words) == len(set(words)) == 2 * len(a.messages)
    assert not set(words) & {w for m in synthetic_corpus("y").messages for w in m.words}
    assert made_up_words("s", 5) == made_up_words("s", 5)
    for m in a.messages:
        session = next(s for s in a.sessions if s.session_id == m.session_id)
        text = next(x.text for x in session.messages if x.message_id == m.message_id)
        assert all(w in text for w in m.words)


# ---- in-process fakes ----


def test_a_correct_backend_passes_every_check():
    results = results_of("GoodFake")
    # scopes_honoured skips: GoodFake does not claim scopes.
    assert {r for name, (r, _) in results.items() if name != "scopes_honoured"} == {"PASS"}, results
    assert results["scopes_honoured"][0] == "SKIP"


@pytest.mark.parametrize("fake, check, words", [
    ("LeaksAcrossNamespaces", "reset_isolates", "leak"),
    ("IgnoresK", "k_honoured", "k=1 gave"),
    ("BogusProvenance", "provenance_ids", "ghost-"),
    ("SnapshotRaises", "capabilities_truthful", "snapshot is claimed but Snapshot failed with INTERNAL"),
    ("Nondeterministic", "deterministic", "differs in score"),
    ("ExitsOnBadInput", "errors_are_status_codes", "UNAVAILABLE"),
    ("AcceptsAnything", "errors_are_status_codes", "succeeded"),
    ("SilentErrors", "errors_are_status_codes", "empty message"),
    ("AnswersUnclaimedSnapshot", "capabilities_truthful", "Snapshot is not claimed but answered"),
    ("ForgetLies", "capabilities_truthful", "still retrieved"),
    ("FlushNotReady", "capabilities_truthful", "Flush said not ready"),
    ("NoVersion", "describe", "without version"),
])
def test_a_broken_backend_fails_exactly_its_check(fake, check, words):
    results = results_of(fake)
    assert failing(results) == {check}, results
    assert words in results[check][1]


def test_a_crash_leaves_describe_unanswered():
    results = results_of("ExitsOnBadInput")
    detail = results["errors_are_status_codes"][1]
    assert "Describe no longer answers" in detail and "exited with code 3" in detail


def test_unclaimed_capabilities_skip_or_expect_unimplemented():
    results = results_of("ClaimsLittle")
    assert failing(results) == set(), results
    assert results["provenance_ids"][0] == "SKIP" and "provenance" in results["provenance_ids"][1]
    assert results["deterministic"][0] == "SKIP"
    assert "Snapshot UNIMPLEMENTED" in results["capabilities_truthful"][1]
    assert "Forget UNIMPLEMENTED" in results["capabilities_truthful"][1]
    assert "by text" in results["flush_then_found"][1]


def test_a_call_over_its_deadline_fails_deadlines():
    results = results_of("SlowSnapshot", Deadlines(snapshot=0.1))
    assert results["deadlines"][0] == "FAIL" and "Snapshot" in results["deadlines"][1]
    assert failing(results) == {"deadlines", "capabilities_truthful"}  # the claimed Snapshot fails too


def test_a_single_check_is_a_plain_function_over_a_harness():
    assert check_k_honoured(Harness(InProcessTarget(fakes["IgnoresK"]()))).result == "FAIL"
    assert CHECKS["k_honoured"](Harness(InProcessTarget(fakes["GoodFake"]()))).result == "PASS"


def test_skipped_checks_are_not_run_and_print_their_reason():
    results = run_checks(InProcessTarget(fakes["IgnoresK"]()), skips={"k_honoured": "pages by itself"})
    by_name = {r.name: r for r in results}
    assert by_name["k_honoured"].result == "SKIP" and "pages by itself" in by_name["k_honoured"].detail
    assert all(r.result == "PASS" for r in results if r.name not in ("k_honoured", "scopes_honoured"))


# ---- over gRPC, in process ----


def test_grpc_address_is_checked_through_the_runner_client():
    server, port = build_server(fakes["GoodFake"]())
    server.start()
    try:
        result = CliRunner().invoke(check_adapter_cmd, [f"grpc://127.0.0.1:{port}", "--json", "--quiet"])
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        assert doc["passed"] is True
        assert [c["result"] for c in doc["checks"]] == ["SKIP" if n == "scopes_honoured" else "PASS" for n in CHECK_NAMES]
        # The same target, with the client's 1 ms deadline probe through ClientTarget.
        client = BackendClient(f"127.0.0.1:{port}", "good-fake")
        try:
            results = run_checks(ClientTarget(client), only=["deadlines"])
            assert results[0].result == "PASS" and "1 ms Retrieve" in results[0].detail
        finally:
            client.close()
    finally:
        server.stop(0)


# ---- the manifest field ----


def write_adapter(root: Path, fake: str, name: str = "fake", extra_yaml: str = "") -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "adapter.py").write_text(FAKES + f"\n\nif __name__ == '__main__':\n    from drift_sdk import serve\n"
                                               f"    serve({fake}())\n")
    (folder / "requirements.txt").write_text("")
    (folder / "adapter.yaml").write_text(f"name: {name}\ndescription: a test adapter\n" + textwrap.dedent(extra_yaml))
    return folder


def test_check_skips_must_name_known_checks_and_give_reasons(tmp_path):
    folder = write_adapter(tmp_path, "GoodFake", extra_yaml="check_skips:\n  k_honored: typo\n")
    with pytest.raises(ManifestError, match=r"adapter.yaml: check_skips: .*unknown check 'k_honored'"):
        load_manifest(folder)
    (folder / "adapter.yaml").write_text("name: fake\ndescription: d\ncheck_skips:\n  deadlines: ''\n")
    with pytest.raises(ManifestError, match="check_skips: .*needs its reason"):
        load_manifest(folder)
    (folder / "adapter.yaml").write_text("name: fake\ndescription: d\ncheck_skips:\n  deadlines: slow host\n")
    assert load_manifest(folder).check_skips == {"deadlines": "slow host"}


def test_unknown_check_skip_is_an_error_exit_2(tmp_path):
    folder = write_adapter(tmp_path, "GoodFake", extra_yaml="check_skips: {bogus: because}\n")
    result = CliRunner().invoke(check_adapter_cmd, [str(folder), "--quiet"])
    assert result.exit_code == 2
    assert "check_skips" in result.output and "bogus" in result.output


def test_an_adapter_that_cannot_start_is_exit_2():
    result = CliRunner().invoke(check_adapter_cmd, ["no-such-adapter-here", "--quiet"])
    assert result.exit_code == 2 and "built-in adapters" in result.output


def test_the_help_names_every_check():
    """``check-adapter --help`` lists the checks a run prints (it named 9 of the 14)."""
    result = CliRunner().invoke(check_adapter_cmd, ["--help"])
    assert result.exit_code == 0
    missing = [name for name in CHECK_NAMES if name not in result.output]
    assert not missing, missing


def test_the_none_control_documents_its_skips():
    skips = load_manifest(adapters_dir() / "none").check_skips
    assert set(skips) == {"flush_then_found"}
    assert all(len(reason) > 20 for reason in skips.values())


# ---- the real adapters, through the process launcher ----


@pytest.mark.slow
@pytest.mark.parametrize("adapter", ["none", "keyword", "reference-compressor"])
def test_built_in_adapters_pass(adapter):
    result = CliRunner().invoke(check_adapter_cmd, [adapter, "--json", "--quiet"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    checks = {c["check"]: c for c in doc["checks"]}
    assert list(checks) == list(CHECK_NAMES)
    assert doc["passed"] is True and doc["describe"]["name"] == adapter
    skips = load_manifest(adapters_dir() / adapter).check_skips
    for name, check in checks.items():
        if name in skips:
            assert check["result"] == "SKIP" and skips[name] in check["detail"]
        elif name == "scopes_honoured" and not doc["describe"]["capabilities"].get("scopes"):
            assert check["result"] == "SKIP" and "does not claim scopes" in check["detail"]
        else:
            assert check["result"] == "PASS", check
    if adapter != "none":
        assert "12/12 messages" in checks["flush_then_found"]["detail"]


@pytest.mark.slow
def test_table_output_lists_every_check(tmp_path):
    result = CliRunner().invoke(check_adapter_cmd, ["none", "--quiet"])
    assert result.exit_code == 0, result.output
    for name in CHECK_NAMES:
        assert name in result.stdout
    assert "adapter.yaml check_skips: The amnesiac control stores nothing" in " ".join(result.stdout.split())
    assert "12 passed, 0 failed, 2 skipped" in result.stdout


@pytest.mark.slow
def test_an_adapter_process_that_crashes_on_bad_input_fails_one_check(tmp_path):
    folder = write_adapter(tmp_path, "CrashesOnBadInput", name="crashy")
    result = CliRunner().invoke(check_adapter_cmd, [str(folder), "--json", "--quiet"])
    assert result.exit_code == 1, result.output
    checks = {c["check"]: c for c in json.loads(result.stdout)["checks"]}
    assert [n for n, c in checks.items() if c["result"] == "FAIL"] == ["errors_are_status_codes"], checks
    detail = checks["errors_are_status_codes"]["detail"]
    assert "Store with an empty namespace: UNAVAILABLE" in detail and "exited with code 3" in detail


@pytest.mark.slow
def test_a_written_skip_turns_the_failure_into_exit_0(tmp_path):
    folder = write_adapter(tmp_path, "CrashesOnBadInput", name="crashy",
                           extra_yaml="check_skips:\n  errors_are_status_codes: known crash, fixed in 0.2\n")
    result = CliRunner().invoke(check_adapter_cmd, [str(folder), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "known crash, fixed in 0.2" in result.stdout
