"""Plain data shapes an adapter author works with (no protobuf in sight).

Only the standard library is used here: adapter runtimes install the SDK part
alone (these modules, the generated stubs, grpcio and protobuf).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Message:
    message_id: str
    author: str
    role: str
    text: str
    timestamp: str
    scope: str = "shared"


@dataclass(frozen=True)
class Session:
    session_id: str
    index: int
    time: str
    participants: tuple[str, ...]
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class Usage:
    """LLM tokens spent inside one call (DRIFT §7.7: W for Store and Flush, R for Retrieve)."""

    input_tokens: int = 0
    output_tokens: int = 0
    llm_calls: int = 0


@dataclass(frozen=True)
class Hit:
    text: str
    score: float
    source_ids: tuple[str, ...] = ()
    """Provenance: the message (or session) ids this hit was derived from."""
    timestamp: str = ""


@dataclass(frozen=True)
class MemoryItem:
    item_id: str
    text: str
    source_ids: tuple[str, ...] = ()
    timestamp: str = ""


@dataclass(frozen=True)
class Capabilities:
    provenance: bool = False
    snapshot: bool = False
    forget: bool = False
    scopes: bool = False
    time_aware: bool = False
    flush_signal: bool = False
    deterministic: bool = False


@dataclass
class StoreResult:
    usage: Usage = field(default_factory=Usage)
    items_stored: int = 0


@dataclass
class FlushResult:
    """What ``Backend.flush`` may return instead of a bool: readiness plus the LLM tokens the
    flush spent (work deferred from Store, e.g. extraction of buffered sessions; counted in W)."""

    ready: bool
    usage: Usage = field(default_factory=Usage)


@dataclass
class RetrieveResult:
    hits: list[Hit]
    usage: Usage = field(default_factory=Usage)
