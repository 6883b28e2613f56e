"""Sealed holdout: holdout scenarios generated from a secret seed, so they exist in no repository.

Committed holdout gold is public: anyone can tune against it. A publisher who keeps a
secret in ``DRIFT_HOLDOUT_SEED`` regenerates the library's holdout scenarios (same specs:
paradigm, horizon, entities, checkpoints) as new worlds with ids ``sealed-<id>``.

What the secret selects, and what each choice protects against:

* the world (values, event schedule, probes): gold that exists in no repository, so no
  answer can be looked up or memorised;
* the surface (:func:`conformance.world.content.surface_for`): a faker locale of its own
  (names, companies, places) and a variant that keeps a subset of every phrasing list
  (frames, requests, decoys): a filter tuned on the public corpus's wording, a phrase bank
  copied from it or a classifier trained on it meets text it has not seen;
* an LLM synthesizer (``synthesizer``, e.g. :class:`conformance.world.llm_synthesis.LLMSynthesizer`
  built on the sealed surface's template outline) can write the sealed turns itself, so not
  even the template grammar is shared; without a key the template form is used.
 The receipt records only a domain-separated SHA-256 of the secret,
so a rerun with the same secret can be shown to be the same sealed set, and the secret
cannot be read back from it (when it is long and random: at least 16 characters are required).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from conformance import paths
from conformance.contract.corpus import fixture_files, read_header, write_fixture, write_gold
from conformance.errors import DriftError
from conformance.world.content import surface_for
from conformance.world.generator import build_scenario
from conformance.world.synthesis import TemplateSynthesizer
from conformance.world.scenario import load_scenarios

HOLDOUT_SEED_ENV = "DRIFT_HOLDOUT_SEED"
MIN_SECRET_CHARS = 16
SEALED_PREFIX = "sealed-"


class SealedHoldoutError(DriftError, ValueError):
    """No usable secret, or the sealed scenarios cannot be generated."""


def read_secret(environ=os.environ) -> str:
    """The secret from ``DRIFT_HOLDOUT_SEED``. Raises SealedHoldoutError when unset or short."""
    secret = environ.get(HOLDOUT_SEED_ENV, "")
    if not secret:
        raise SealedHoldoutError(f"--sealed-holdout needs a secret seed in {HOLDOUT_SEED_ENV} (e.g. "
                                 "`export DRIFT_HOLDOUT_SEED=$(python -c 'import secrets; print(secrets.token_hex(16))')`,"
                                 " kept in your CI's secret store)")
    if len(secret) < MIN_SECRET_CHARS:
        raise SealedHoldoutError(f"{HOLDOUT_SEED_ENV} is {len(secret)} characters; use at least {MIN_SECRET_CHARS} "
                                 "random ones, or its hash in the receipt could be reversed by guessing")
    return secret


def seed_fingerprint(secret: str) -> str:
    """SHA-256 (hex) of the secret, domain-separated: what the receipt records instead of it."""
    return hashlib.sha256(b"drift-conformance sealed holdout v1\0" + secret.encode()).hexdigest()


def generator_seed(secret: str) -> int:
    """The corpus seed the generator gets: 64 bits derived from the secret (never the secret)."""
    return int.from_bytes(hashlib.sha256(b"drift-conformance sealed seed v1\0" + secret.encode()).digest()[:8], "big")


def sealed_synthesizer(secret: str):
    """The template synthesizer on the secret's own surface (locale and phrasing variant)."""
    return TemplateSynthesizer(surface_for(generator_seed(secret)))


def write_sealed_holdout(fixtures_dir: Path, gold_dir: Path, secret: str,
                         scenarios_dir: Path | None = None, synthesizer=None) -> list[str]:
    """Generate the sealed twin of every holdout scenario spec into the two folders; return the ids.

    ``synthesizer``: who writes the turns (default :func:`sealed_synthesizer`). Same secret
    and specs: byte-identical files. Raises SealedHoldoutError when the spec folder has no
    holdout scenario.
    """
    folder = Path(scenarios_dir) if scenarios_dir is not None else paths.data_root() / "scenarios"
    specs = [spec for spec in load_scenarios(folder) if spec.holdout]
    if not specs:
        raise SealedHoldoutError(f"{folder} has no holdout scenario spec to seal")
    seed = generator_seed(secret)
    ids = []
    for spec in specs:
        sealed = spec.model_copy(update={"id": SEALED_PREFIX + spec.id})
        lines, gold = build_scenario(sealed, seed, synthesizer or sealed_synthesizer(secret))
        write_fixture(Path(fixtures_dir) / f"{sealed.id}.jsonl", lines)
        write_gold(Path(gold_dir) / f"{sealed.id}.json", gold)
        ids.append(sealed.id)
    return ids


@contextmanager
def sealed_corpus(fixtures_dir: Path, gold_dir: Path, secret: str):
    """A private corpus: the public scenarios of ``fixtures_dir`` plus the sealed holdout.

    Yields ``(fixtures, gold, sealed_ids)`` in a temporary folder readable by this user only
    (mode 0700), removed on exit, so the sealed gold never lands in the working tree. The
    committed holdout scenarios are left out: the sealed ones take their place.
    """
    root = Path(tempfile.mkdtemp(prefix="drift-sealed-"))
    try:
        os.chmod(root, 0o700)
        fixtures, gold = root / "fixtures", root / "gold"
        fixtures.mkdir()
        gold.mkdir()
        for path in fixture_files(fixtures_dir):
            if read_header(path).holdout:
                continue
            shutil.copyfile(path, fixtures / path.name)
            shutil.copyfile(Path(gold_dir) / f"{path.stem}.json", gold / f"{path.stem}.json")
        ids = write_sealed_holdout(fixtures, gold, secret)
        yield fixtures, gold, ids
    finally:
        shutil.rmtree(root, ignore_errors=True)
