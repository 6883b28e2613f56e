"""``adapters/<name>/adapter.yaml``: what the launcher needs to know about an adapter."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from conformance.contract.limits import load_yaml
from conformance.errors import DriftError

MAX_NAME_CHARS = 64
"""An adapter name becomes part of file, cgroup and image names; longer ones are refused."""

#: Version of the adapter.yaml format (``schema/adapter.schema.json``'s ``x-schema-version``).
#: Bump it on a breaking change and add ``schema/history/adapter.v<version>.json``.
ADAPTER_SCHEMA_VERSION = "1"

CheckName = Literal["describe", "reset_isolates", "flush_then_found", "provenance_ids", "k_honoured", "deadlines",
                    "capabilities_truthful", "deterministic", "errors_are_status_codes",
                    "snapshot_consistent", "provenance_carried", "stored_findable", "scopes_honoured",
                    "usage_valid"]
"""The contract checks of ``drift-conformance check-adapter`` (conformance/backend/checks.py)."""
CHECK_NAMES: tuple[str, ...] = get_args(CheckName)


MAX_STARTUP_TIMEOUT_S = 3600.0
"""Longest wait for an adapter to serve, seconds: an hour covers loading any local model; beyond
it a never-starting adapter would hold the run for as long as the number says."""
MAX_CPUS = 1024.0
"""Most CPUs an adapter may ask for (the request is clamped to the host anyway, limits.py)."""
MAX_MEMORY_GB = 4096.0
"""Most memory an adapter may ask for, GiB (clamped to the host's like ``cpus``)."""


class Resources(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cpus: float = Field(default=1, gt=0, le=MAX_CPUS, allow_inf_nan=False)
    memory_gb: float = Field(default=2, gt=0, le=MAX_MEMORY_GB, allow_inf_nan=False)


class AdapterManifest(BaseModel):
    """The contents of ``adapter.yaml``."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    description: str
    kind: Literal["control", "reference", "shortcut", "system"] = "system"
    """``shortcut``: a cheap strategy `audit-shortcuts` runs to show the corpus rewards memory, not a trick."""
    entry: str = "adapter.py"
    """Script the adapter's virtualenv python runs; it calls ``drift_sdk.serve()``."""
    startup_timeout_s: float = Field(default=60, gt=0, le=MAX_STARTUP_TIMEOUT_S, allow_inf_nan=False)
    """How long to wait for health SERVING (model loading included), seconds; at most
    :data:`MAX_STARTUP_TIMEOUT_S`."""
    resources: Resources = Resources()
    env: list[str] = []
    """Names of environment variables passed through to the adapter (e.g. API keys).
    Nothing else from the runner's environment reaches it, and never a variable the harness
    reads for itself (``DRIFT_HOLDOUT_SEED``, ``DRIFT_GOLD``, any run option's: refused here)."""
    network: Literal["none", "outbound"] = "none"
    """What a container of this adapter may reach: ``none`` (loopback only; the runner talks to it
    over a unix socket) or ``outbound`` (its own bridge network with a default route, for an
    adapter that calls a service such as Zep Cloud or an LLM API). Process mode does not isolate
    the network. Recorded in the receipt (``isolation.<adapter>.network``)."""
    outbound_when_set: list[str] = []
    """Variables from ``env`` that switch a ``network: none`` container to outbound for a run when
    one is set to a value other than empty, ``0``, ``false``, ``no`` or ``off``: the opt-in online
    mode of an otherwise offline adapter (e.g. mem0's ``DRIFT_MEM0_INFER``)."""
    idempotent_stores: bool = False
    """True when storing the same session twice in a namespace leaves the memory as storing it
    once: the runner then retries a Store that failed with UNAVAILABLE (a dropped connection),
    as it retries every other call. False (the default): a failed Store is that scenario's fault."""
    notes: str | None = None
    needs: Literal["nothing", "key", "server"] = "nothing"
    """What a run of the adapter needs besides the suite: ``nothing`` (offline), ``key`` (an API
    key of a hosted service or model), ``server`` (a running instance of the memory system).
    Shown by ``drift-conformance adapters``."""
    verified: Literal["live", "fake-service", "unverified"] = "unverified"
    """How the adapter was verified against the system it wraps: ``live`` (run against the
    real system or library), ``fake-service`` (only against a local fake of the service's
    API, no real instance available), ``unverified``. Shown by ``drift-conformance adapters``
    and recorded in the receipt."""
    check_skips: dict[CheckName, Annotated[str, Field(min_length=1)]] = {}
    """Contract checks of ``drift-conformance check-adapter`` this adapter skips, each with the
    written reason (printed in place of a result), e.g. ``{flush_then_found: "stores nothing"}``."""

    @field_validator("env")
    @classmethod
    def _not_the_harness_s(cls, value):
        from conformance.secrets import harness_variable

        taken = [name for name in value if harness_variable(name)]
        if taken:
            raise ValueError(f"{', '.join(taken)}: the harness's own variable(s), never handed to an adapter "
                             "(the sealed holdout's seed, the audit salt, the corpus and records folders, the "
                             "run's options); give the adapter a variable of its own name")
        return value

    @field_validator("outbound_when_set")
    @classmethod
    def _switches_reach_the_adapter(cls, value, info):
        unlisted = [name for name in value if name not in info.data.get("env", [])]
        if unlisted:
            raise ValueError(f"{', '.join(unlisted)} not listed under env (a variable the adapter never "
                             f"receives cannot switch its mode)")
        return value

    @field_validator("check_skips", mode="before")
    @classmethod
    def _known_checks(cls, value):
        if isinstance(value, dict):
            for name, reason in value.items():
                if name not in CHECK_NAMES:
                    raise ValueError(f"unknown check {name!r}; the checks are: {', '.join(CHECK_NAMES)}")
                if not isinstance(reason, str) or not reason.strip():
                    raise ValueError(f"{name}: a skipped check needs its reason (a non-empty string)")
        return value


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
    data = load_yaml(path, lambda where, field, message: ManifestError(f"{where}: {field}: {message}"))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ManifestError(f"{path}: (document): expected a mapping with name, description, entry..., "
                            f"got {type(data).__name__}")
    try:
        manifest = AdapterManifest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(document)"
        raise ManifestError(f"{path}: {field}: {first['msg']}") from None
    if len(manifest.name) > MAX_NAME_CHARS:
        raise ManifestError(f"{path}: name: longer than {MAX_NAME_CHARS} characters")
    entry_path(folder, manifest)
    return manifest


def entry_path(folder: Path, manifest: AdapterManifest) -> Path:
    """The script the adapter runs: ``folder / manifest.entry`` with every symlink resolved.

    Called when adapter.yaml is read and again just before launch, so a file swapped for a
    symlink in between is caught.

    Raises:
        ManifestError: the entry is absolute, climbs with ``..``, does not exist, is not a
            regular file, or resolves (through a symlinked file or folder) outside ``folder``.
    """
    where = Path(folder) / "adapter.yaml"
    entry = Path(manifest.entry)
    if "\0" in manifest.entry or entry.is_absolute() or ".." in entry.parts or not entry.parts:
        raise ManifestError(f"{where}: entry: {manifest.entry!r} must be a relative path inside the adapter folder")
    root = Path(folder).resolve()
    target = (root / entry).resolve()
    if not target.is_relative_to(root):
        # A symlink (the file itself or a folder on the way) may not lead out: the entry runs
        # with the adapter's privileges, so what runs must be what the folder holds.
        raise ManifestError(f"{where}: entry: {manifest.entry} resolves to {target}, outside the adapter folder "
                            f"{root}")
    if not target.exists():
        raise ManifestError(f"{where}: entry: {manifest.entry} does not exist in {folder}")
    if not target.is_file():
        raise ManifestError(f"{where}: entry: {manifest.entry} is not a regular file")
    return target
