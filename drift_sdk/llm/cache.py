"""A response cache: one JSON file per request, so a rerun makes no calls and gets the same text.

The key is the SHA-256 (hex) of the canonical JSON (sorted keys, no spaces, UTF-8) of the
request ``{"model", "system", "messages", "max_tokens", "temperature"}``. The file
``<dir>/<key>.json`` holds ``{"format": 1, "key", "request", "response", "created_at"}``;
``response`` is what :class:`drift_sdk.llm.client.LLMResponse` keeps of the original call
(text, served model, tokens, ttft and total ms, stop reason, message id). No header and no key
is ever written. Writes are atomic (a temporary file in the same folder, then ``os.replace``);
a file that cannot be read or does not match its key is ignored with an :class:`LLMCacheWarning`.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
from datetime import datetime, timezone
from pathlib import Path

from drift_sdk.llm.errors import LLMCacheWarning, LLMConfigError

FORMAT = 1
#: Fields of a stored response and their types.
RESPONSE_FIELDS = {"text": str, "model": str, "input_tokens": int, "output_tokens": int,
                   "ttft_ms": (int, float), "total_ms": (int, float), "stop_reason": (str, type(None)),
                   "message_id": (str, type(None))}


def canonical(request: dict) -> bytes:
    """The bytes that are hashed: canonical JSON of the five request fields."""
    fields = {k: request[k] for k in ("model", "system", "messages", "max_tokens", "temperature")}
    return json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


def cache_key(request: dict) -> str:
    """SHA-256 hex of :func:`canonical` ``(request)``."""
    return hashlib.sha256(canonical(request)).hexdigest()


class ResponseCache:
    """A folder of cached responses (created when missing).

    Raises:
        LLMConfigError: the folder cannot be created or is not a folder (its message names it).
    """

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            why = self._unusable(exc)
        else:
            return
        # Raised outside the except block: the OSError rides along neither as cause nor as context.
        raise LLMConfigError(f"the LLM response cache folder {str(self.directory)!r} (--llm-cache, or "
                             f"DRIFT_LLM_CACHE for a run) cannot be used: {why}. Give a folder that exists or can be "
                             "created")

    def _unusable(self, exc: OSError) -> str:
        """Why ``mkdir`` failed, in words."""
        for folder in (self.directory, *self.directory.parents):  # the nearest one that exists
            try:
                found = folder.exists()
            except OSError:  # a folder on the way may not be searched (EACCES): the mkdir error says so
                break
            if found:
                if not folder.is_dir():
                    return "it exists and is not a folder" if folder == self.directory else \
                        f"{str(folder)!r} is not a folder"
                break
        reason = exc.strerror or type(exc).__name__
        where = exc.filename
        if where is not None and str(where) != str(self.directory):
            return f"cannot create it ({reason}: {str(where)!r})"
        return f"cannot create it ({reason})"

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.directory)!r})"

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str, request: dict) -> dict | None:
        """The stored response for ``key`` (a dict of :data:`RESPONSE_FIELDS`), or None on a miss
        or an unusable file (which is warned about, never raised)."""
        path = self.path(key)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            return self._bad(path, f"cannot be read ({type(exc).__name__}: {exc})")
        try:
            doc = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            return self._bad(path, f"is not JSON ({exc})")
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            return self._bad(path, f"is not a format-{FORMAT} cache entry")
        if doc.get("key") != key or not isinstance(doc.get("request"), dict):
            return self._bad(path, "does not hold the request of its key")
        try:
            if cache_key(doc["request"]) != key or canonical(doc["request"]) != canonical(request):
                return self._bad(path, "holds a different request than its name says")
        except (KeyError, TypeError, ValueError):
            return self._bad(path, "holds a malformed request")
        response = doc.get("response")
        if not isinstance(response, dict):
            return self._bad(path, "has no response")
        for field, kind in RESPONSE_FIELDS.items():
            value = response.get(field)
            if not isinstance(value, kind) or isinstance(value, bool):
                return self._bad(path, f"has a bad response field {field!r}")
        return {field: response[field] for field in RESPONSE_FIELDS}

    def put(self, key: str, request: dict, response: dict) -> Path | None:
        """Write the entry atomically; returns its path, or None (with a warning) when the write
        failed: the response is still good, only the next run will pay for it again."""
        doc = {"format": FORMAT, "key": key, "request": json.loads(canonical(request)),
               "response": {field: response[field] for field in RESPONSE_FIELDS},
               "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        data = json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True).encode("utf-8")
        path = self.path(key)
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{key[:16]}.", suffix=".tmp")
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
            return path
        except OSError as exc:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
            warnings.warn(f"LLM response cache: cannot write {path} ({type(exc).__name__}: {exc}); "
                          "the call was not cached", LLMCacheWarning, stacklevel=3)
            return None

    @staticmethod
    def _bad(path: Path, why: str) -> None:
        warnings.warn(f"LLM response cache: ignoring {path}: it {why}; the call goes to the API and "
                      "rewrites it", LLMCacheWarning, stacklevel=4)
        return None
