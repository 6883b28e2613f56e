"""``adapters/<name>/adapter.yaml``: what the launcher needs to know about an adapter."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from conformance.errors import DriftError


class Resources(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cpus: float = Field(default=1, gt=0)
    memory_gb: float = Field(default=2, gt=0)


class AdapterManifest(BaseModel):
    """The contents of ``adapter.yaml``."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    description: str
    kind: Literal["control", "reference", "system"] = "system"
    entry: str = "adapter.py"
    """Script the adapter's virtualenv python runs; it calls ``drift_sdk.serve()``."""
    startup_timeout_s: float = Field(default=60, gt=0)
    """How long to wait for health SERVING (model loading included), seconds."""
    resources: Resources = Resources()
    env: list[str] = []
    """Names of environment variables passed through to the adapter (e.g. API keys).
    Nothing else from the runner's environment reaches it."""
    notes: str | None = None


class ManifestError(DriftError, ValueError):
    pass


def load_manifest(folder: Path) -> AdapterManifest:
    """Read and validate ``folder/adapter.yaml``.

    Raises:
        ManifestError: missing file, bad YAML, or a field that does not validate
            (the message names the file and the field).
    """
    path = Path(folder) / "adapter.yaml"
    if not path.exists():
        raise ManifestError(f"{path}: missing (an adapter folder needs adapter.yaml, adapter.py, requirements.txt)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ManifestError(f"{path}: invalid YAML: {exc}") from None
    try:
        manifest = AdapterManifest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise ManifestError(f"{path}: {field}: {first['msg']}") from None
    if not (Path(folder) / manifest.entry).exists():
        raise ManifestError(f"{path}: entry: {manifest.entry} does not exist in {folder}")
    return manifest
