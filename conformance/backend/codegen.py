"""Generate the committed gRPC stubs from ``proto/drift/v1/memory_backend.proto``.

The stubs are generated with grpcio-tools 1.66 (protobuf gencode 5.27), the oldest
gencode we support, so that one committed set imports under protobuf runtimes 5.x,
6.x and 7.x: adapters such as mem0 pin ``protobuf<7`` while the runner may use 7.
grpcio-tools 1.66 itself pins ``protobuf<6``, so it runs in a throwaway virtualenv
cached under ``~/.cache/drift-conformance/codegen-<hash>``.

Run from a source checkout: ``python -m conformance.backend.codegen``.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

GRPCIO_TOOLS = "grpcio-tools==1.66.2"
REPO = Path(__file__).resolve().parents[2]
PROTO_ROOT = REPO / "proto"
PROTO_FILE = "drift/v1/memory_backend.proto"
STUB_DIR = REPO / "drift_sdk" / "v1"
STUB_FILES = ("memory_backend_pb2.py", "memory_backend_pb2.pyi", "memory_backend_pb2_grpc.py")
HEADER = "# Generated from proto/{proto} by {tools}; proto sha256 {digest}. Do not edit.\n"


def proto_digest(proto_root: Path = PROTO_ROOT) -> str:
    """SHA-256 (hex) of the .proto file's bytes."""
    return hashlib.sha256((proto_root / PROTO_FILE).read_bytes()).hexdigest()


def codegen_python() -> Path:
    """Return the python of a cached virtualenv holding grpcio-tools 1.66.

    Raises:
        VenvError: the virtualenv could not be built (no package index reachable).
    """
    from conformance.backend.venvs import cached_venv
    from conformance.paths import cache_dir

    key = hashlib.sha256(GRPCIO_TOOLS.encode()).hexdigest()[:12]
    python, _ = cached_venv(cache_dir() / f"codegen-{key}", [GRPCIO_TOOLS], "the stub generator")
    return python


def generate(out_dir: Path, proto_root: Path = PROTO_ROOT, python: Path | None = None) -> list[Path]:
    """Generate the three stub files into ``out_dir``; returns their paths.

    Imports inside the generated gRPC module are rewritten from ``drift.v1`` to
    ``drift_sdk.v1`` so the stubs live inside the SDK package.

    Raises:
        RuntimeError: protoc failed (the message carries its stderr).
    """
    python = python or codegen_python()
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            [str(python), "-m", "grpc_tools.protoc", f"-I{proto_root}",
             f"--python_out={tmp}", f"--pyi_out={tmp}", f"--grpc_python_out={tmp}", PROTO_FILE],
            capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"protoc failed on {PROTO_FILE}:\n{proc.stderr}")
        header = HEADER.format(proto=PROTO_FILE, tools=GRPCIO_TOOLS, digest=proto_digest(proto_root))
        written = []
        for name in STUB_FILES:
            text = (Path(tmp) / "drift" / "v1" / name).read_text()
            text = text.replace("from drift.v1 import", "from drift_sdk.v1 import")
            target = out_dir / name
            target.write_text(header + text)
            written.append(target)
    return written


def main() -> int:
    written = generate(STUB_DIR)
    for path in written:
        print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
