"""adapter.yaml: how an adapter was verified is declared, listed and recorded."""

import subprocess
import sys

import pytest

from conformance.backend.manifest import ManifestError, entry_path, load_manifest
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
    assert out.splitlines()[0].split()[:4] == ["adapter", "kind", "needs", "verified"]
    line = next(row for row in out.splitlines() if row.startswith("keyword "))
    assert line.split()[1:4] == ["reference", "nothing", "live"]
    honcho = next(row for row in out.splitlines() if row.startswith("honcho "))
    assert honcho.split()[2] == "server"


def test_an_entry_that_resolves_outside_the_folder_is_refused(tmp_path):
    """``../`` and absolute entries were refused, but a symlink named ``adapter.py`` (or a symlinked
    folder on the way to it) ran a file outside the adapter folder."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "payload.py").write_text("print('ran outside the adapter folder')\n")

    linked_file = tmp_path / "linked-file"
    linked_file.mkdir()
    (linked_file / "adapter.py").symlink_to(outside / "payload.py")
    (linked_file / "adapter.yaml").write_text("name: a\ndescription: d\n")

    linked_dir = tmp_path / "linked-dir"
    linked_dir.mkdir()
    (linked_dir / "src").symlink_to(outside, target_is_directory=True)
    (linked_dir / "adapter.yaml").write_text("name: b\ndescription: d\nentry: src/payload.py\n")

    for folder in (linked_file, linked_dir):
        with pytest.raises(ManifestError, match=r"entry: .* resolves to .*payload\.py, outside the adapter folder"):
            load_manifest(folder)


def test_a_symlink_that_stays_inside_the_folder_is_fine(tmp_path):
    folder = write(tmp_path / "inside", "name: a\ndescription: d\nentry: main.py\n")
    (folder / "main.py").symlink_to("adapter.py")
    assert load_manifest(folder).entry == "main.py"
    # The adapter folder itself may be reached through a symlink (a checkout linked into place).
    (tmp_path / "alias").symlink_to(folder, target_is_directory=True)
    assert load_manifest(tmp_path / "alias").entry == "main.py"
    assert entry_path(tmp_path / "alias", load_manifest(folder)) == (folder / "adapter.py").resolve()


def test_the_entry_is_checked_again_when_it_is_launched(tmp_path):
    """Swapped for a symlink after adapter.yaml was read: the launcher resolves and checks again."""
    folder = write(tmp_path / "a", "name: a\ndescription: d\n")
    manifest = load_manifest(folder)
    (tmp_path / "payload.py").write_text("")
    (folder / "adapter.py").unlink()
    (folder / "adapter.py").symlink_to(tmp_path / "payload.py")
    with pytest.raises(ManifestError, match="outside the adapter folder"):
        entry_path(folder, manifest)


def test_a_network_switch_must_be_a_variable_the_adapter_receives(tmp_path):
    with pytest.raises(ManifestError, match=r"adapter\.yaml: outbound_when_set: .*MODE not listed under env"):
        load_manifest(write(tmp_path / "a", "name: a\ndescription: d\noutbound_when_set: [MODE]\n"))
    with pytest.raises(ManifestError, match=r"adapter\.yaml: network: "):
        load_manifest(write(tmp_path / "b", "name: b\ndescription: d\nnetwork: everywhere\n"))


def test_the_guides_example_manifest_passes_the_built_in_rule(tmp_path):
    """docs/add-your-memory-system.md's adapter.yaml, copied into a folder, loads and says how it
    was verified as every built-in adapter must (its example once said ``unverified``)."""
    import re

    from conformance.paths import data_root

    guide = (data_root() / "docs" / "add-your-memory-system.md").read_text(encoding="utf-8")
    example = re.search(r"```yaml\n(name: my-memory.*?)```", guide, re.S).group(1)
    manifest = load_manifest(write(tmp_path / "my-memory", example))
    assert manifest.name == "my-memory"
    assert manifest.verified in ("live", "fake-service")


@pytest.mark.parametrize("text, field", [
    ("startup_timeout_s: 1e300\n", "startup_timeout_s"),
    ("startup_timeout_s: 1.0e+300\n", "startup_timeout_s"),
    ("startup_timeout_s: .inf\n", "startup_timeout_s"),
    ("startup_timeout_s: .nan\n", "startup_timeout_s"),
    ("startup_timeout_s: 0\n", "startup_timeout_s"),
    ("resources: {cpus: 1.0e+9}\n", "resources.cpus"),
    ("resources: {cpus: .nan}\n", "resources.cpus"),
    ("resources: {memory_gb: .inf}\n", "resources.memory_gb"),
    ("resources: {memory_gb: 1.0e+12}\n", "resources.memory_gb"),
])
def test_every_manifest_number_is_bounded(tmp_path, text, field):
    """``startup_timeout_s: 1e300`` was accepted, and a never-starting adapter then blocked the run:
    every number of adapter.yaml is finite and bounded, and the error names the file and the field."""
    folder = write(tmp_path / "a", "name: a\ndescription: d\n" + text)
    with pytest.raises(ManifestError) as err:
        load_manifest(folder)
    message = str(err.value)
    assert message.startswith(f"{folder / 'adapter.yaml'}: {field}: "), message


def test_the_bounds_leave_every_built_in_adapter_valid():
    from conformance.backend.manifest import MAX_CPUS, MAX_MEMORY_GB, MAX_STARTUP_TIMEOUT_S

    for folder in adapters_dir().iterdir():
        if (folder / "adapter.yaml").exists():
            manifest = load_manifest(folder)
            assert manifest.startup_timeout_s <= MAX_STARTUP_TIMEOUT_S
            assert manifest.resources.cpus <= MAX_CPUS and manifest.resources.memory_gb <= MAX_MEMORY_GB
