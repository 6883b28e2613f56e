"""The budget gate variants of DRIFT §5.2 and the scope gates of §5.3, on the harness side.

``--gate`` takes one of:

- ``hard`` (the default, DRIFT §5.1): each transcript is dropped as soon as every
  system's ``Store`` has returned; answers come from ``Retrieve`` alone.
- ``soft:K``: the runner also keeps the last K session transcripts (K >= 1) as a
  short-term buffer of its own; the adapters see exactly what they see under ``hard``.
  At each probe the reader's context is the retrieved hits, in rank order, followed by
  the buffered messages the querying entity may see (:func:`visible_to`), newest
  first, all inside the same token budget. Older transcripts are dropped.
- ``summary:N``: ``Store`` receives, instead of each transcript, the reference
  compressor's extractive summary (:mod:`drift_sdk.summary`) of it, each summary
  message at most N tokens (N >= 1, tiktoken ``o200k_base``; the date prefix counts).
  Scopes are summarised apart (DRIFT §5.3, :func:`summary_session`), so private
  content never mixes into the shared summary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from conformance.contract.fixture import Message, Session
from conformance.errors import DriftError

#: Largest K and N accepted: far beyond any corpus (a guard against typos such as 10000000).
MAX_SOFT_SESSIONS = 100_000
MAX_SUMMARY_TOKENS = 1_000_000

#: Author of the shared summary message: not an entity of the scenario (the summary text
#: names every speaker), and role ``system`` says the harness wrote it.
SUMMARY_AUTHOR = "summary"

_SPEC = re.compile(r"^(?P<kind>[a-z]+)(?::(?P<size>.*))?$")


class GateSpecError(DriftError, ValueError):
    """A ``--gate`` value that is not ``hard``, ``soft:K`` or ``summary:N``."""


@dataclass(frozen=True)
class BudgetGate:
    """One budget gate variant (DRIFT §5.2). ``str(gate)`` is its ``--gate`` spelling.

    ``size`` is K (sessions kept) for ``soft``, N (tokens per summary message) for
    ``summary``, and 0 for ``hard``.
    """

    kind: Literal["hard", "soft", "summary"] = "hard"
    size: int = 0

    def __post_init__(self) -> None:
        if self.kind == "hard" and self.size != 0:
            raise GateSpecError(f"the hard gate takes no size (got {self.size})")
        if self.kind == "soft" and not 1 <= self.size <= MAX_SOFT_SESSIONS:
            raise GateSpecError(f"soft:K needs 1 <= K <= {MAX_SOFT_SESSIONS:,} sessions, got {self.size}")
        if self.kind == "summary" and not 1 <= self.size <= MAX_SUMMARY_TOKENS:
            raise GateSpecError(f"summary:N needs 1 <= N <= {MAX_SUMMARY_TOKENS:,} tokens, got {self.size}")
        if self.kind not in ("hard", "soft", "summary"):
            raise GateSpecError(f"unknown gate kind {self.kind!r}: use hard, soft:K or summary:N")

    @classmethod
    def parse(cls, text: str) -> "BudgetGate":
        """``"hard"``, ``"soft:K"`` or ``"summary:N"`` (K, N positive integers), case-insensitive.

        Raises:
            GateSpecError: anything else; the message says what was expected.
        """
        spec = (text or "").strip().lower()
        match = _SPEC.match(spec)
        if match is None or match["kind"] not in ("hard", "soft", "summary"):
            raise GateSpecError(f"--gate {text!r}: expected hard, soft:K (K sessions kept) or summary:N (N tokens "
                                "per summary)")
        kind, size = match["kind"], match["size"]
        if kind == "hard":
            if size is not None:
                raise GateSpecError(f"--gate {text!r}: the hard gate takes no size; write hard")
            return cls()
        unit = "K, the number of sessions kept" if kind == "soft" else "N, the tokens per summary"
        if size is None or not size.isdigit():
            raise GateSpecError(f"--gate {text!r}: {kind} needs a positive whole number {unit}, e.g. "
                                f"{kind}:{3 if kind == 'soft' else 256}")
        try:
            return cls(kind, int(size))
        except GateSpecError as exc:
            raise GateSpecError(f"--gate {text!r}: {exc}") from None

    def __str__(self) -> str:
        return self.kind if self.kind == "hard" else f"{self.kind}:{self.size}"

    @property
    def is_hard(self) -> bool:
        return self.kind == "hard"

    def note(self, budget_tokens: int) -> str | None:
        """The receipt note describing a non-hard variant (None for ``hard``)."""
        if self.kind == "soft":
            return (f"soft budget gate (DRIFT §5.2), K={self.size}: besides each memory, the harness kept the last "
                    f"{self.size} session transcripts and appended their messages the querying entity may see "
                    f"(shared ones and its own private ones) after the retrieved hits, newest first, inside the same "
                    f"{budget_tokens}-token budget; buffer hits are marked from_buffer and left out of recall; an "
                    "ablation, not comparable with hard-gate results")
        if self.kind == "summary":
            return (f"summary budget gate (DRIFT §5.2, §5.3), N={self.size}: Store received, instead of each "
                    "transcript, the reference compressor's extractive summary: one shared message and one private "
                    f"message per author of private messages, each at most {self.size} o200k_base tokens; recall "
                    "counts an evidence message as covered when a hit cites the summary that kept a sentence of it; "
                    "not comparable with hard-gate results")
        return None


HARD = BudgetGate()


def visible_to(message: Message, entity: str) -> bool:
    """True when ``entity`` may see ``message``: it is shared, or private and authored by ``entity`` (DRIFT §4.2)."""
    return message.scope == "shared" or message.author == entity


def summary_message_id(session_id: str, author: str | None = None) -> str:
    """``<session_id>:summary`` (shared) or ``<session_id>:summary:<author>`` (that author's private one).

    ``:`` rather than another separator because message ids allow only letters, digits
    and ``._:-`` (:data:`conformance.contract.fixture.ID_PATTERN`).
    """
    return f"{session_id}:summary" if author is None else f"{session_id}:summary:{author}"


def summary_session(session: Session, cap_tokens: int) -> tuple[Session, dict[str, tuple[str, ...]]]:
    """The session ``Store`` receives under ``summary:N`` (DRIFT §5.2), scopes kept apart (§5.3).

    Returns ``(summary, covers)``. ``summary`` has the session's id, index, time and
    participants, and at most one message per scope group, in this order:

    - ``<session_id>:summary``: the shared messages' summary, scope ``shared``, author
      :data:`SUMMARY_AUTHOR`, role ``system``;
    - per author of private messages (in order of first appearance)
      ``<session_id>:summary:<author>``: that author's private messages' summary, scope
      ``private``, author that entity, role that of its first private message.

    Each text is :func:`drift_sdk.summary.summarise` of the group with cap
    ``cap_tokens`` (o200k_base tokens, the ``[date]`` prefix included); its timestamp is
    the group's first message's. A group whose summary comes out empty (all filler, or no
    sentence fits the cap) yields no message, so ``summary.messages`` may be empty.
    ``covers`` maps each summary message id to the ids of the messages that contributed a
    kept sentence (the evidence that summary carries).

    Raises:
        pydantic.ValidationError: a summary message id longer than the 128 characters ids allow.
    """
    from drift_sdk.summary import summarise

    groups: dict[str | None, list[Message]] = {None: []}
    for message in session.messages:
        groups.setdefault(None if message.scope == "shared" else message.author, []).append(message)
    messages: list[Message] = []
    covers: dict[str, tuple[str, ...]] = {}
    for author, group in groups.items():
        if not group:
            continue
        text, sources = summarise(group, session.time, cap_tokens)
        if not text:
            continue
        message_id = summary_message_id(session.session_id, author)
        messages.append(Message(message_id=message_id, author=author or SUMMARY_AUTHOR,
                                role="system" if author is None else group[0].role, text=text,
                                timestamp=group[0].timestamp, scope="shared" if author is None else "private"))
        covers[message_id] = sources
    summary = Session(session_id=session.session_id, index=session.index, time=session.time,
                      participants=list(session.participants), messages=messages)
    return summary, covers
