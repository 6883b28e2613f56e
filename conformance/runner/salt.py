"""The audit salt: a secret that keys the state audit's seeded choices, committed in the receipt.

Without it, which message of each session the audit samples, which of its words ask, which
older sessions are re-probed and where the audit's probes go among the real ones are drawn
from a hash of public ids (``conformance.runner.audit._rng``): an adapter sees those ids at
Store time and replays every choice (``bench/attacks/seed_replay``). The corpus is public too,
so nothing derived from it is a secret; the salt comes from outside the repository.

Commit-reveal (docs/audit.md, "The audit salt"): a run given ``--audit-salt-file`` keys every
choice with HMAC-SHA-256 by the file's bytes and records only their SHA-256 in the receipt
(``receipt.audit_salt.commitment``, what ``sha256sum FILE`` prints). The salt goes to no adapter
and into no record, log or result. After publication the publisher reveals the file; anyone then
checks it against the receipt (:func:`verify_salt`) and reruns with it to get the same result.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from conformance.errors import DriftError

__all__ = ["AuditSalt", "SaltError", "MIN_SALT_BYTES", "SALT_SEEDING", "new_salt_file", "read_salt",
           "salt_commitment", "salt_warnings", "verify_salt"]

MIN_SALT_BYTES = 16
"""Fewest bytes (surrounding whitespace left out) a salt file holds: a shorter salt could be
guessed from its commitment, and then the audit's choices with it."""
SALT_SEEDING = "HMAC-SHA-256 keyed by the salt over the public ids"
"""How the salt enters the audit's seeds (``receipt.audit_salt.seeding``)."""


class SaltError(DriftError, ValueError):
    """A salt file that cannot be read, is empty or too short, or exists where a new one would go."""


def salt_commitment(salt: bytes) -> str:
    """SHA-256 (hex, 64 characters) of the salt's bytes: what the receipt records instead of it."""
    return hashlib.sha256(salt).hexdigest()


@dataclass(frozen=True)
class AuditSalt:
    """A run's audit salt: its commitment, and the secret when this process draws with it.

    ``secret`` is None for a commitment alone (``merge`` re-scores recorded audits and draws
    nothing); it never shows in a repr.
    """

    commitment: str
    secret: bytes | None = field(default=None, repr=False)

    @classmethod
    def of(cls, secret: bytes) -> "AuditSalt":
        return cls(commitment=salt_commitment(secret), secret=secret)

    @classmethod
    def read(cls, path: Path) -> "AuditSalt":
        """The salt held by the file at ``path`` (its bytes exactly, a trailing newline included).

        Raises:
            SaltError: the file cannot be read, or holds fewer than :data:`MIN_SALT_BYTES` bytes
                besides whitespace (the message names the file).
        """
        return cls.of(read_salt(path))

    def receipt(self) -> dict:
        """The receipt's ``audit_salt`` block (:class:`conformance.contract.result.SaltCommitment`)."""
        return {"commitment": self.commitment, "seeding": SALT_SEEDING}


def read_salt(path: Path) -> bytes:
    """The bytes of the salt file at ``path``. Raises SaltError (naming the file) when it cannot
    be read or is shorter than :data:`MIN_SALT_BYTES`."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SaltError(f"audit salt file {path}: cannot be read ({exc.strerror or exc})") from None
    if not data.strip():
        raise SaltError(f"audit salt file {path} is empty; make one with `drift-conformance audit-salt new {path}`")
    if len(data.strip()) < MIN_SALT_BYTES:
        raise SaltError(f"audit salt file {path} holds {len(data.strip())} bytes; a salt needs at least "
                        f"{MIN_SALT_BYTES} random ones, or it could be guessed from the commitment in the receipt "
                        f"(`drift-conformance audit-salt new PATH` writes 32)")
    return data


def salt_warnings(path: Path) -> list[str]:
    """Why the salt file at ``path`` may not stay secret: a mode that lets other users read it (a
    runner started as root runs process-mode adapters as such a user; docs/audit.md). Empty when
    none applies or the file cannot be examined (reading it reports that)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return []
    if mode & 0o077:
        return [f"audit salt file {path} is readable by other users (mode {mode & 0o777:o}): an adapter running as "
                f"one could read it and replay the audit; `chmod 600 {path}`"]
    return []


def new_salt_file(path: Path) -> str:
    """Write 32 random bytes, hex, and a newline to a new file at ``path`` (mode 0600); return
    the commitment a run with it records.

    Raises:
        SaltError: ``path`` exists (a salt already in use must not be overwritten) or cannot be written.
    """
    text = secrets.token_hex(32) + "\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise SaltError(f"{path} exists; a salt is not overwritten (remove it first, or pick another path)") from None
    except OSError as exc:
        raise SaltError(f"{path}: cannot be written ({exc.strerror or exc})") from None
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(text)
    return salt_commitment(text.encode("ascii"))


def verify_salt(result_path: Path, salt_path: Path) -> tuple[bool, str]:
    """Whether the salt file at ``salt_path`` is the one the run of ``result_path`` committed to:
    ``(matches, a line saying so)``; a run without a salt matches no file.

    Raises:
        SaltError: ``result_path`` is not a result.json, or the salt file is unreadable or short.
    """
    try:
        receipt = json.loads(Path(result_path).read_text(encoding="utf-8"))["receipt"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SaltError(f"{result_path}: not a result.json ({exc.__class__.__name__}: {exc})") from None
    mine = salt_commitment(read_salt(salt_path))
    committed = (receipt.get("audit_salt") or {}).get("commitment")
    if committed is None:
        return False, (f"{result_path}: the run used no audit salt (public-id seeding: an adapter can replay the "
                       f"audit's choices); {salt_path} cannot be its salt")
    if committed != mine:
        return False, (f"{salt_path} is not the salt of {result_path}: its SHA-256 is {mine}, the receipt commits to "
                       f"{committed}")
    return True, f"{salt_path} is the audit salt {result_path} committed to (SHA-256 {committed})"
