"""Container images of adapters: ``drift-adapter-NAME:TAG``, built from ``adapters/NAME/Dockerfile``.

Every adapter's Dockerfile sees the same build context, assembled here::

    Dockerfile              the adapter folder's Dockerfile
    adapter/                the adapter folder (bytecode caches left out)
    drift_sdk/              the SDK package of this runner (bytecode caches left out)
    sdk-requirements.txt    what drift_sdk needs at run time (grpcio, grpcio-health-checking, protobuf)
    wheelhouse/             empty, or wheels built on the host (below)

The image carries the sha256 of everything above but the wheelhouse as the label
``org.drift-conformance.inputs-sha256``: unchanged inputs reuse the image, a changed
byte rebuilds it. It also carries the adapter's manifest (``adapter.yaml`` as JSON), so
an image runs without its folder.

Builds run with the host's network (``network_mode="host"``). When ``pip`` inside the
build cannot reach a package index (no network, or a TLS proxy the image does not
trust), the requirements are built into wheels on the host (``pip wheel``) and the
build is repeated with ``PIP_NO_INDEX=1``, installing from ``wheelhouse/`` only; that
is remembered per engine for a day so later builds go there directly.

The ``docker`` package is imported only here and in the Docker adapter: process mode
never needs it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import drift_sdk
from conformance.backend.manifest import AdapterManifest
from conformance.backend.venvs import SDK_REQUIREMENTS, looks_offline
from conformance.errors import DriftError
from conformance.paths import cache_dir, cache_lock

LABEL_PREFIX = "org.drift-conformance"
INPUTS_LABEL = f"{LABEL_PREFIX}.inputs-sha256"
MANIFEST_LABEL = f"{LABEL_PREFIX}.manifest"
IMAGE_PREFIX = "drift-adapter-"
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
_SKIP_SUFFIXES = (".pyc", ".pyo")
#: How long "no package index from a build container" is remembered, seconds.
_OFFLINE_MEMORY_S = 24 * 3600
_OFFLINE_EXTRA = re.compile(r"CERTIFICATE_VERIFY_FAILED|SSLError")


class DockerUnavailable(DriftError, RuntimeError):
    """The docker SDK is missing or no Docker engine answers; the message says which and what to do."""


class ImageBuildError(DriftError, RuntimeError):
    """An adapter image could not be built (or found); the message ends with the build's last lines."""


@dataclass(frozen=True)
class AdapterImage:
    """An adapter image ready to run."""

    name: str
    """``drift-adapter-NAME:TAG``"""
    image_id: str
    """``sha256:...`` of the image."""
    inputs_sha256: str | None
    """The build-inputs hash label (None for an image built elsewhere without it)."""
    manifest: AdapterManifest
    built_now: bool = False
    build_seconds: float | None = None
    wheelhouse: bool = False
    """True when the requirements came from wheels built on the host (no index in the build)."""


def image_name(adapter: str, tag: str = "latest") -> str:
    """``drift-adapter-NAME:TAG``.

    Raises:
        ImageBuildError: ``tag`` is not a valid Docker tag.
    """
    if not _TAG.match(tag):
        raise ImageBuildError(f"{tag!r} is not a valid image tag (letters, digits, _ . -; at most 128)")
    return f"{IMAGE_PREFIX}{adapter}:{tag}"


def connect(timeout_s: float = 20.0):
    """A docker SDK client whose engine answered ``ping``.

    Honours ``DOCKER_HOST`` (and the SDK's other ``DOCKER_*`` variables).

    Raises:
        DockerUnavailable: the ``docker`` package is not installed, or no engine answers.
    """
    try:
        import docker
    except ImportError:
        raise DockerUnavailable("container isolation needs the `docker` Python package (pip install docker); "
                                "without it run adapters in process mode (--adapter NAME, --isolation process)") from None
    where = os.environ.get("DOCKER_HOST") or "the default socket (unix:///var/run/docker.sock)"
    try:
        client = docker.from_env(timeout=int(timeout_s))
        client.ping()
    except Exception as exc:  # the SDK raises DockerException, requests' and urllib3's errors alike
        reason = " ".join(str(exc).split())[:300]
        raise DockerUnavailable(f"no Docker engine answers at {where} ({type(exc).__name__}: {reason}); start "
                                f"one or point DOCKER_HOST at it, or run adapters in process mode "
                                f"(--adapter NAME, --isolation process)") from None
    return client


def _wanted(rel: Path) -> bool:
    return not (set(rel.parts) & _SKIP_DIRS) and not rel.name.endswith(_SKIP_SUFFIXES)


def _tree(root: Path, prefix: str) -> dict[str, bytes]:
    """Every wanted file under ``root`` (symlinked files by their content).

    Raises:
        ImageBuildError: a symlink leads outside ``root`` (its target's bytes would enter the image).
    """
    files = {}
    real_root = root.resolve()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_symlink() and not path.resolve().is_relative_to(real_root):
            raise ImageBuildError(f"{path} is a symlink to {path.resolve()}, outside the adapter folder {root}: "
                                  f"copy the file in instead")
        if path.is_file() and _wanted(rel):
            files[f"{prefix}/{rel.as_posix()}"] = path.read_bytes()
    return files


def context_files(folder: Path) -> dict[str, bytes]:
    """The build context of the adapter in ``folder`` (wheelhouse aside): context path -> bytes.

    Raises:
        ImageBuildError: the folder has no Dockerfile.
    """
    folder = Path(folder)
    dockerfile = folder / "Dockerfile"
    if not dockerfile.is_file():
        raise ImageBuildError(f"{folder} has no Dockerfile, so no image can be built from it; run it in process "
                              f"mode (--isolation process) or add one (see adapters/keyword/Dockerfile)")
    files = {"Dockerfile": dockerfile.read_bytes(),
             "sdk-requirements.txt": ("\n".join(SDK_REQUIREMENTS) + "\n").encode()}
    files.update(_tree(folder, "adapter"))
    files.update(_tree(Path(drift_sdk.__file__).resolve().parent, "drift_sdk"))
    return files


def inputs_hash(files: dict[str, bytes]) -> str:
    """sha256 (hex) over the context paths and their bytes, in path order.

    Paths and contents are length-prefixed, so no two different contexts share a stream.
    """
    digest = hashlib.sha256()
    for path in sorted(files):
        name, data = path.encode(), files[path]
        digest.update(len(name).to_bytes(8, "big") + name + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def _labels(image) -> dict[str, str]:
    return (image.attrs.get("Config") or {}).get("Labels") or {}


def find_image(client, name: str):
    """The image called ``name``, or None."""
    import docker

    try:
        return client.images.get(name)
    except docker.errors.ImageNotFound:
        return None


def manifest_label(manifest: AdapterManifest) -> str:
    """The manifest as the image's label carries it (JSON): only the fields adapter.yaml set, so
    that defaults read back as defaults (``resources`` unset means the reference host)."""
    return json.dumps(manifest.model_dump(mode="json", exclude_unset=True), sort_keys=True)


def manifest_of(image, name: str) -> AdapterManifest:
    """The adapter manifest an image carries in its label.

    Raises:
        ImageBuildError: the image has no (valid) manifest label.
    """
    text = _labels(image).get(MANIFEST_LABEL)
    if not text:
        raise ImageBuildError(f"image {name} carries no {MANIFEST_LABEL} label (it was not built by "
                              f"drift-conformance build); build it with `drift-conformance build`")
    try:
        return AdapterManifest.model_validate(json.loads(text))
    except ValueError as exc:
        raise ImageBuildError(f"image {name}: its {MANIFEST_LABEL} label does not validate: {exc}") from None


def existing_image(client, name: str) -> AdapterImage:
    """An already built image, run as it is (its folder is not here).

    Raises:
        ImageBuildError: no image by that name, or it carries no manifest.
    """
    image = find_image(client, name)
    if image is None:
        from conformance import paths

        shipped = sorted(p.parent.name for p in paths.adapters_dir().glob("*/Dockerfile"))
        bare = name.split("drift-adapter-", 1)[-1].split(":", 1)[0]
        raise ImageBuildError(f"no image {name}, and no adapter folder with a Dockerfile to build it from; the "
                              f"adapters that ship one (built on first use): {', '.join(shipped)}; or drop the "
                              f":TAG (--adapter {bare}) to run the adapter in its own process")
    return AdapterImage(name, image.id, _labels(image).get(INPUTS_LABEL), manifest_of(image, name))


def ensure_image(client, folder: Path, manifest: AdapterManifest, tag: str = "latest", log=None,
                 force: bool = False) -> AdapterImage:
    """``drift-adapter-NAME:TAG`` built from ``folder``, reused when its inputs hash matches.

    Raises:
        ImageBuildError: no Dockerfile, or the build failed (the message ends with its last lines).
    """
    name = image_name(manifest.name, tag)
    files = context_files(folder)
    digest = inputs_hash(files)
    with cache_lock(cache_dir() / "images" / f"{manifest.name}-{tag}.lock"):
        image = find_image(client, name)
        if image is not None and not force and _labels(image).get(INPUTS_LABEL) == digest:
            return AdapterImage(name, image.id, digest, manifest)
        if log:
            why = "absent" if image is None else "forced" if force else "its inputs changed"
            log(f"building image {name} ({why}; inputs {digest[:12]})")
        started = time.monotonic()
        labels = {INPUTS_LABEL: digest, MANIFEST_LABEL: manifest_label(manifest)}
        new, wheelhouse = _build(client, files, name, labels, log)
        if image is not None and image.id != new.id:
            _remove_if_dangling(client, image.id)
        return AdapterImage(name, new.id, digest, manifest, built_now=True,
                            build_seconds=round(time.monotonic() - started, 1), wheelhouse=wheelhouse)


def _remove_if_dangling(client, image_id: str) -> None:
    """Drop the image a rebuild replaced when no tag names it any more (another tag, or a
    container using it, keeps it)."""
    import docker

    try:
        if not client.images.get(image_id).tags:
            client.images.remove(image_id)
    except docker.errors.APIError:
        pass


def _offline_marker(client) -> Path:
    engine = re.sub(r"[^A-Za-z0-9]", "", client.info().get("ID", "engine"))[:40]
    return cache_dir() / "images" / f"no-index-in-builds-{engine}"


def _build(client, files: dict[str, bytes], name: str, labels: dict[str, str], log) -> tuple[object, bool]:
    marker = _offline_marker(client)
    known_offline = marker.exists() and time.time() - marker.stat().st_mtime < _OFFLINE_MEMORY_S
    with tempfile.TemporaryDirectory(prefix="drift-image-") as tmp:
        context = Path(tmp)
        for rel, data in files.items():
            (context / rel).parent.mkdir(parents=True, exist_ok=True)
            (context / rel).write_bytes(data)
        (context / "wheelhouse").mkdir()
        if not known_offline:
            ok, image, tail = _docker_build(client, context, name, labels, {}, log)
            if ok:
                return image, False
            if not (looks_offline(tail) or _OFFLINE_EXTRA.search(tail)):
                raise ImageBuildError(f"docker build of {name} failed; its last lines:\n{tail}")
            if log:
                log(f"{name}: pip cannot reach a package index inside the build; building wheels on the host")
        _wheelhouse(context, name, log)
        ok, image, tail = _docker_build(client, context, name, labels, {"PIP_NO_INDEX": "1"}, log)
        if not ok:
            raise ImageBuildError(f"docker build of {name} (from wheels built on the host) failed; its last "
                                  f"lines:\n{tail}")
        if not known_offline:  # remembered only once the wheels did what the index could not
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text("pip inside docker build could not reach a package index\n")
        return image, True


def _docker_build(client, context: Path, name: str, labels: dict, buildargs: dict, log) -> tuple[bool, object, str]:
    """One ``docker build``; returns (succeeded, image or None, last lines of its output)."""
    lines: list[str] = []
    error = None
    for chunk in client.api.build(path=str(context), tag=name, labels=labels, buildargs=buildargs,
                                  network_mode="host", rm=True, forcerm=True, pull=False, decode=True):
        text = chunk.get("stream") or chunk.get("status") or ""
        for line in text.splitlines():
            if line.strip():
                lines.append(line.rstrip())
                if log and line.startswith("Step "):
                    log(f"  {name}: {line.strip()}")
        if "error" in chunk:
            error = chunk.get("error") or str(chunk.get("errorDetail"))
            lines.append(error.strip())
    tail = "\n".join("    " + line for line in lines[-30:])
    if error is not None:
        return False, None, tail
    image = find_image(client, name)
    return image is not None, image, tail


def _wheelhouse(context: Path, name: str, log) -> None:
    """``pip wheel`` the adapter's requirements and the SDK's into ``context/wheelhouse``.

    Raises:
        ImageBuildError: pip failed (its last lines are in the message).
    """
    argv = [sys.executable, "-m", "pip", "wheel", "--disable-pip-version-check", "-q",
            "--wheel-dir", str(context / "wheelhouse"), "-r", str(context / "sdk-requirements.txt")]
    if (context / "adapter" / "requirements.txt").is_file():
        argv += ["-r", str(context / "adapter" / "requirements.txt")]
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join("    " + line for line in (proc.stdout + proc.stderr).strip().splitlines()[-20:])
        raise ImageBuildError(f"{name}: pip wheel on the host failed too:\n{tail}")
    if log:
        count = len(list((context / "wheelhouse").glob("*.whl")))
        log(f"  {name}: {count} wheels built on the host in {time.monotonic() - started:.1f} s "
            f"(python {sys.version_info.major}.{sys.version_info.minor})")


__all__ = ["AdapterImage", "DockerUnavailable", "ImageBuildError", "connect", "context_files", "ensure_image",
           "existing_image", "find_image", "image_name", "inputs_hash", "manifest_label", "manifest_of"]
