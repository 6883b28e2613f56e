"""The importers ``drift-conformance import NAME`` knows: every entry point of the group
:data:`ENTRY_POINT_GROUP`, so a separate package adds one without touching this one.

A package registers an importer in its ``pyproject.toml``::

    [project.entry-points."drift_conformance.importers"]
    mydata = "mypackage.drift_import:IMPORTER"

where ``IMPORTER`` is an :class:`Importer`. Names are read from the installed packages'
metadata without importing anything; an importer's module is imported only when it is
loaded (:func:`load_importer`), so a run, or an import of one dataset, never pays for the others.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.errors import DriftError

if TYPE_CHECKING:
    from conformance.importers.report import ImportReport

__all__ = ["ENTRY_POINT_GROUP", "RESERVED", "Importer", "ImporterError", "load_importer", "registered"]

ENTRY_POINT_GROUP = "drift_conformance.importers"

RESERVED = frozenset({"list"})
"""Names that are subcommands of ``import`` itself; an entry point of such a name is ignored."""


@dataclass(frozen=True)
class Importer:
    """One dataset format ``import NAME PATH --out DIR`` reads."""

    run: Callable[[Path, Path], ImportReport]
    """``run(path, out_dir)``: writes ``out_dir/fixtures``, ``out_dir/gold`` and
    ``out_dir/import-report.json``; returns the report. Raises a DriftError (a
    SourceFormatError) when the source cannot be read at all, OSError on I/O failure."""
    summary: str
    """One line for ``import list`` and ``import --help``."""
    description: str = ""
    """More for ``import NAME --help`` (the format: docs/import-formats.md)."""
    unit: str = "conversation"
    """What the dataset is made of, for the message when nothing could be imported."""
    folders: bool = False
    """Whether PATH may be a folder (else it must be a file)."""
    extra_lines: Callable[[ImportReport], list[str]] | None = None
    """More summary lines after the report's, e.g. how many probes need a judge."""


class ImporterError(DriftError):
    """No importer of that name is installed, or its entry point does not load."""


def registered() -> dict[str, metadata.EntryPoint]:
    """Importer name -> its entry point, in name order (nothing is imported). When two
    installed packages register the same name, the first one found is kept."""
    found: dict[str, metadata.EntryPoint] = {}
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry.name not in RESERVED:
            found.setdefault(entry.name, entry)
    return dict(sorted(found.items()))


def unknown_importer(name: str, known: list[str]) -> ImporterError:
    """The error for a NAME no package registered, naming the ones that are."""
    if known:
        return ImporterError(f"no importer named {name!r}; installed: {', '.join(known)} "
                             f"(a package adds one under the entry point group {ENTRY_POINT_GROUP!r})")
    return ImporterError(f"no importer named {name!r}, and none is installed: the entry point group "
                         f"{ENTRY_POINT_GROUP!r} is empty (reinstall drift-conformance, e.g. pip install -e .)")


def load_importer(name: str) -> Importer:
    """The importer registered as ``name``, its module imported now.

    Raises:
        ImporterError: no importer of that name (the message lists the installed ones), or
            its entry point fails to import or names something that is not an :class:`Importer`.
    """
    entries = registered()
    entry = entries.get(name)
    if entry is None:
        raise unknown_importer(name, list(entries))
    try:
        loaded = entry.load()
    except Exception as exc:  # a third-party package's bug must not read as ours
        raise ImporterError(f"importer {name!r} ({entry.value}) does not load: "
                            f"{type(exc).__name__}: {exc}") from None
    if not isinstance(loaded, Importer):
        raise ImporterError(f"importer {name!r} ({entry.value}) is a {type(loaded).__name__}, not an "
                            "conformance.importers.registry.Importer")
    return loaded
