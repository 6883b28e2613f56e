"""The guide case format's keys, bounds and export error, shared by its import and export
(docs/import-formats.md#guide)."""

from __future__ import annotations

from conformance.contract.limits import MAX_JSONL_LINE_BYTES
from conformance.errors import DriftError

SOURCE = "guide"
EXTRAS_KEY = "drift"
MAX_CASE_LINE_BYTES = MAX_JSONL_LINE_BYTES
"""One case (one line of the guide file), in bytes: the fixture line bound (16 MiB). A case
is a whole scenario; the longest committed scenario exports to about 1.5 MiB."""

ISSUE_KINDS = (
    "malformed_lines", "malformed_records", "malformed_extras", "duplicate_ids", "unparseable_timestamps",
    "naive_timestamps", "order_changes", "early_questions", "dangling_evidence", "future_evidence",
    "integer_answers", "missing_answers",
)
"""The importer's own lists of :attr:`ImportReport.issues`; the report also holds the
quality lists (:data:`conformance.importers.quality.QUALITY_KINDS`). All are present, empty
ones included."""


HEADER_EXTRAS = ("schema_version", "paradigm", "source", "horizons", "entities", "holdout", "splits", "free_form",
                 "markers")
GOLD_FILE_EXTRAS = ("schema_version", "source", "seed", "profiles", "session_tiers", "events", "snapshots")
SESSION_EXTRAS = ("participants",)
TURN_EXTRAS = ("author", "timestamp", "scope", "role")
PROBE_EXTRAS = ("asked_by", "options", "choices", "domains", "temporal")
GOLD_PROBE_EXTRAS = ("subtype", "abstention", "accepted", "stale", "attribute", "entity", "owner", "horizon")
CHECKPOINT_KEY = "checkpoint_id"


class GuideExportError(DriftError):
    """A scenario cannot be exported (its case would exceed :data:`MAX_CASE_LINE_BYTES`)."""

