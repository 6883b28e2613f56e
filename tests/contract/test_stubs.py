"""The committed gRPC stubs: fresh against the .proto, importable under protobuf 5, 6 and 7,
and the proto's Session/Message shapes in step with the pydantic fixture model."""

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.backend.venvs import VenvError, cached_venv
from conformance.backend import codegen
from conformance.paths import cache_dir
from conformance.contract.fixture import Message, Session
from drift_sdk.v1 import memory_backend_pb2 as pb

REPO = Path(__file__).resolve().parents[2]


def test_stub_header_matches_the_proto_bytes():
    # Hermetic guard: editing the .proto without regenerating changes its digest.
    digest = codegen.proto_digest()
    for name in codegen.STUB_FILES:
        first = (codegen.STUB_DIR / name).read_text().splitlines()[0]
        assert digest in first, f"{name} was generated from another version of the proto; run " \
                                f"`python -m conformance.backend.codegen`"


@pytest.mark.slow
def test_regenerated_stubs_equal_the_committed_ones(tmp_path):
    try:
        python = codegen.codegen_python()
    except VenvError as exc:
        pytest.skip(f"cannot build the grpcio-tools 1.66 virtualenv (needs the package index): {exc}")
    codegen.generate(tmp_path, python=python)
    for name in codegen.STUB_FILES:
        assert (tmp_path / name).read_bytes() == (codegen.STUB_DIR / name).read_bytes(), \
            f"drift_sdk/v1/{name} is stale; run `python -m conformance.backend.codegen`"


def _proto_fields(descriptor) -> set[str]:
    return {f.name for f in descriptor.fields}


@pytest.mark.parametrize("model, descriptor", [(Session, pb.Session.DESCRIPTOR), (Message, pb.Message.DESCRIPTOR)])
def test_proto_and_fixture_model_have_the_same_fields(model, descriptor):
    assert set(model.model_fields) == _proto_fields(descriptor)


def test_repeated_and_scalar_kinds_agree():
    fields = {f.name: f for f in pb.Session.DESCRIPTOR.fields}
    assert fields["participants"].is_repeated and fields["messages"].is_repeated
    assert not fields["session_id"].is_repeated


def _cached_env(spec: str) -> Path:
    try:
        python, _ = cached_venv(cache_dir() / "test-venvs" / ("pb-" + hashlib.sha256(spec.encode()).hexdigest()[:10]),
                                spec.split(), spec)
    except VenvError as exc:
        pytest.skip(f"cannot install {spec} (needs the package index): {exc}")
    return python


@pytest.mark.slow
@pytest.mark.parametrize("protobuf", ["protobuf==5.29.5", "protobuf==6.33.6", "protobuf==7.36.1"])
def test_stubs_import_under_each_supported_protobuf(protobuf):
    # pip picks the grpcio-health-checking release that accepts this protobuf.
    python = _cached_env(f"{protobuf} grpcio-health-checking")
    code = ("import google.protobuf as g; import drift_sdk; from drift_sdk.v1 import memory_backend_pb2 as pb; "
            "s = pb.Session(session_id='s'); assert pb.Session.FromString(s.SerializeToString()).session_id == 's'; "
            "server, port = drift_sdk.build_server(drift_sdk.Backend()); server.start(); server.stop(0); "
            "print(g.__version__)")
    proc = subprocess.run([str(python), "-W", "error", "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "")})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().split(".")[0] == protobuf.split("==")[1].split(".")[0]


def test_runner_side_stub_import_is_warning_free():
    proc = subprocess.run([sys.executable, "-W", "error", "-c", "import drift_sdk.v1.memory_backend_pb2_grpc"],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
