"""adapter.yaml: how an adapter was verified is declared, listed and recorded."""

import subprocess
import sys

import pytest

from conformance.backend.manifest import ManifestError, load_manifest
from conformance.paths import adapters_dir


def write(folder, text):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "adapter.py").write_text("")
    (folder / "adapter.yaml").write_text(text)
    return folder


def test_verified_defaults_to_unverified_and_rejects_other_words(tmp_path):
    assert load_manifest(write(tmp_path / "a", "name: a\ndescription: d\n")).verified == "unverified"
    assert load_manifest(write(tmp_path / "b", "name: b\ndescription: d\nverified: fake-service\n")).verified == \
        "fake-service"
    with pytest.raises(ManifestError, match="verified"):
        load_manifest(write(tmp_path / "c", "name: c\ndescription: d\nverified: trust-me\n"))


def test_every_built_in_adapter_says_how_it_was_verified():
    for folder in adapters_dir().iterdir():
        if (folder / "adapter.yaml").exists():
            assert load_manifest(folder).verified in ("live", "fake-service"), folder.name


def test_the_adapters_listing_shows_it():
    out = subprocess.run([sys.executable, "-m", "conformance.cli", "adapters"], capture_output=True, text=True,
                         check=True).stdout
    line = next(row for row in out.splitlines() if row.startswith("keyword "))
    assert line.split()[1:3] == ["reference", "live"]
