"""Graphiti (``graphiti-core``) behind the drift.v1 contract: a temporal knowledge graph built
by an LLM, on an embedded graph database.

* Graph database: Kuzu, embedded, on disk in ``./graphiti-data/kuzu`` (graphiti-core's
  ``KuzuDriver``; no server). Its full-text indexes are created here at startup (the
  driver's own ``build_indices_and_constraints`` does nothing for Kuzu, and graphiti's
  de-duplication queries them); Kuzu 0.11 ships its FTS extension, no download.
* LLM: graphiti's ``AnthropicClient`` over an ``AsyncAnthropic`` client, model
  ``DRIFT_GRAPHITI_LLM_MODEL`` (a dated Anthropic model id, default
  :data:`DEFAULT_LLM_MODEL`; also used as graphiti's small model), API root
  ``ANTHROPIC_BASE_URL`` when set. ``ANTHROPIC_API_KEY`` is required: without it the
  adapter exits at startup with a message saying so.
* Embeddings: all-MiniLM-L6-v2 int8 ONNX (:mod:`minilm`), behind graphiti's
  ``EmbedderClient``. No cross-encoder: the search config below uses none, and the
  placeholder :class:`OrderKeepingReranker` only stops graphiti from building its OpenAI
  reranker. Telemetry off (``GRAPHITI_TELEMETRY_ENABLED=false``).

Mapping:

* namespace -> a graphiti ``group_id`` (``drift_`` + the first 24 hex digits of the
  namespace's sha256: graphiti accepts only letters, digits, ``-`` and ``_``).
* session -> one ``add_episode`` (source ``message``; body = ``"<author>: <text>"`` lines;
  name = session id; ``reference_time`` = session time). The adapter keeps episode uuid ->
  the session's message ids, so provenance is **session-granular**: a fact cites every
  message of every session (episode) it was extracted from; an episode hit cites its
  session's messages.
* Retrieve -> ``search_`` over the group: facts (edges; cosine similarity on MiniLM and
  BM25, fused by RRF) and episodes (BM25), k each; merged by reciprocal rank (facts
  first on ties) and cut to k.
* Reset -> graphiti's ``clear_data`` for the group. Flush -> ready (``add_episode``
  returns once everything is written). Snapshot -> every episode and every fact of the
  group. Forget -> not offered (a fact is extracted from whole sessions).

Runs in its own virtualenv (requirements.txt): imports ``drift_sdk`` and its own
requirements only.
"""

from __future__ import annotations

import os

# Before graphiti is imported: its telemetry module reads this at import.
os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import asyncio  # noqa: E402
import hashlib  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from datetime import datetime, timezone  # noqa: E402
from importlib.metadata import version as _dist_version  # noqa: E402
from pathlib import Path  # noqa: E402
from types import SimpleNamespace  # noqa: E402

from drift_sdk import Backend, Capabilities, Hit, MemoryItem, StoreResult, Usage, serve  # noqa: E402

#: Graph database and anything else written, under the cwd (the launcher's fresh working folder).
DATA_DIR = Path(os.environ.get("DRIFT_GRAPHITI_DATA_DIR") or "graphiti-data").resolve()
KEY_VAR, URL_VAR, MODEL_VAR = "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "DRIFT_GRAPHITI_LLM_MODEL"
DEFAULT_LLM_MODEL = "claude-haiku-4-5-20251001"
PINNED_MODEL = re.compile(r"^claude-[a-z0-9.-]+-\d{8}$")
#: The Anthropic SDK's own retries (429 / 529 / 5xx / connection errors) and timeout (s).
LLM_MAX_RETRIES = 4
LLM_TIMEOUT_S = 100.0
#: graphiti's LLM temperature (its default is 1; 0 keeps reruns as close as the model allows).
LLM_TEMPERATURE = 0.0
GRAPHITI_VERSION = _dist_version("graphiti-core")
#: Episodes and facts read per Snapshot page.
SNAPSHOT_PAGE = 500


class ConfigError(ValueError):
    """Bad adapter configuration from the environment (the message says what to set)."""


def llm_settings(environ=os.environ) -> dict:
    """``{"api_key", "model", "base_url"}`` from the environment.

    Raises:
        ConfigError: ``ANTHROPIC_API_KEY`` unset or blank, ``DRIFT_GRAPHITI_LLM_MODEL`` not a
            dated Anthropic model id, or ``ANTHROPIC_BASE_URL`` not an http(s) URL.
    """
    key = (environ.get(KEY_VAR) or "").strip()
    if not key:
        raise ConfigError(f"{KEY_VAR} is not set: graphiti builds its graph with an LLM (entity and fact "
                          f"extraction on every Store), and this adapter uses Anthropic for it. Set {KEY_VAR} "
                          f"(and optionally {MODEL_VAR}, default {DEFAULT_LLM_MODEL}, and {URL_VAR}) in the "
                          f"runner's environment; adapter.yaml passes them through")
    model = (environ.get(MODEL_VAR) or "").strip() or DEFAULT_LLM_MODEL
    if not PINNED_MODEL.match(model):
        raise ConfigError(f"{MODEL_VAR}={model!r} is not a dated Anthropic model id (for example "
                          f"{DEFAULT_LLM_MODEL!r}): aliases move, and a run must name the model it used")
    base_url = (environ.get(URL_VAR) or "").strip() or None
    if base_url and not base_url.startswith(("http://", "https://")):
        raise ConfigError(f"{URL_VAR}={base_url!r} is not an http(s) URL")
    return {"api_key": key, "model": model, "base_url": base_url}


def group_id(namespace: str) -> str:
    """The graphiti group id of a namespace (graphiti allows ``[A-Za-z0-9_-]`` only)."""
    return "drift_" + hashlib.sha256(namespace.encode()).hexdigest()[:24]


def _time(text: str) -> datetime:
    """An ISO 8601 timestamp (``Z`` accepted) as an aware datetime; naive ones are UTC.

    Raises:
        ValueError: not ISO 8601.
    """
    try:
        parsed = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"not an ISO 8601 time: {text!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _iso(value: datetime | None) -> str:
    if value is None:
        return ""
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


@dataclass
class _Episode:
    session_id: str
    message_ids: tuple[str, ...]
    time: str


@dataclass
class _Namespace:
    group_id: str
    episodes: dict[str, _Episode] = field(default_factory=dict)
    """graphiti episode uuid -> the session it holds."""


class _Loop:
    """One asyncio loop in a daemon thread: graphiti is async, the SDK's calls are not."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="graphiti-loop", daemon=True).start()

    def run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()


def _graphiti_parts() -> SimpleNamespace:
    """graphiti's classes, imported once the environment is set (telemetry off)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from graphiti_core import Graphiti
        from graphiti_core.cross_encoder.client import CrossEncoderClient
        from graphiti_core.driver.kuzu_driver import KuzuDriver
        from graphiti_core.edges import EntityEdge
        from graphiti_core.embedder.client import EmbedderClient
        from graphiti_core.errors import GroupsEdgesNotFoundError
        from graphiti_core.llm_client.anthropic_client import AnthropicClient
        from graphiti_core.llm_client.config import LLMConfig
        from graphiti_core.nodes import EpisodeType, EpisodicNode
        from graphiti_core.search.search_config import (EdgeReranker, EdgeSearchConfig, EdgeSearchMethod,
                                                        EpisodeReranker, EpisodeSearchConfig,
                                                        EpisodeSearchMethod, SearchConfig)
    return SimpleNamespace(
        Graphiti=Graphiti, CrossEncoderClient=CrossEncoderClient, KuzuDriver=KuzuDriver, EntityEdge=EntityEdge,
        EmbedderClient=EmbedderClient, GroupsEdgesNotFoundError=GroupsEdgesNotFoundError,
        AnthropicClient=AnthropicClient, LLMConfig=LLMConfig, EpisodeType=EpisodeType, EpisodicNode=EpisodicNode,
        EdgeReranker=EdgeReranker, EdgeSearchConfig=EdgeSearchConfig, EdgeSearchMethod=EdgeSearchMethod,
        EpisodeReranker=EpisodeReranker, EpisodeSearchConfig=EpisodeSearchConfig,
        EpisodeSearchMethod=EpisodeSearchMethod, SearchConfig=SearchConfig)


class Graph:
    """graphiti on Kuzu with the MiniLM embedder and an Anthropic LLM; counts LLM usage."""

    def __init__(self, data_dir: Path, llm: dict) -> None:
        import kuzu
        from anthropic import AsyncAnthropic
        from graphiti_core.driver.driver import GraphProvider
        from graphiti_core.graph_queries import get_fulltext_indices

        from drift_sdk.minilm import EMBEDDING_DIMS, MiniLMOnnx

        g = _graphiti_parts()
        self.g = g
        embed_model = MiniLMOnnx()

        class MiniLMEmbedder(g.EmbedderClient):
            """graphiti's embedder interface over all-MiniLM-L6-v2 (384 dims, unit length)."""

            async def create(self, input_data):
                # graphiti passes one text, or a list holding one text (as for OpenAI's API).
                if isinstance(input_data, list) and len(input_data) == 1 and isinstance(input_data[0], str):
                    input_data = input_data[0]
                if not isinstance(input_data, str):
                    raise TypeError(f"the MiniLM embedder takes one text, got {type(input_data).__name__}")
                return embed_model.embed(input_data).tolist()

            async def create_batch(self, input_data_list):
                return [embed_model.embed(text).tolist() for text in input_data_list]

        class OrderKeepingReranker(g.CrossEncoderClient):
            """Not a cross-encoder: keeps the passages' order with falling scores. Given to graphiti
            only so that it does not build its OpenAI reranker; no search here asks for it."""

            async def rank(self, query, passages):
                return [(p, 1.0 / (i + 1)) for i, p in enumerate(passages)]

        data_dir.mkdir(parents=True, exist_ok=True)
        os.environ["EMBEDDING_DIM"] = str(EMBEDDING_DIMS)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # "Kuzu backend is deprecated" upstream
            driver = g.KuzuDriver(db=str(data_dir / "kuzu"))
        # graphiti-core 0.31's KuzuDriver never sets _database, which add_episode reads when a
        # group_id is given; "" is the default database, and Kuzu's clone() returns the driver.
        if not hasattr(driver, "_database"):
            driver._database = ""
        connection = kuzu.Connection(driver.db)
        try:
            for query in get_fulltext_indices(GraphProvider.KUZU):
                try:
                    connection.execute(query)
                except RuntimeError as exc:  # a reopened database has them already
                    if "already exists" not in str(exc):
                        raise
        finally:
            connection.close()
        self.driver = driver

        client = AsyncAnthropic(api_key=llm["api_key"], base_url=llm["base_url"], max_retries=LLM_MAX_RETRIES,
                                timeout=LLM_TIMEOUT_S)
        create = client.messages.create
        self._usage = [0, 0, 0]
        self._lock = threading.Lock()

        async def counted_create(**params):
            response = await create(**params)
            used = getattr(response, "usage", None)
            with self._lock:
                self._usage[0] += int(getattr(used, "input_tokens", 0) or 0)
                self._usage[1] += int(getattr(used, "output_tokens", 0) or 0)
                self._usage[2] += 1
            return response

        client.messages.create = counted_create
        config = g.LLMConfig(api_key=llm["api_key"], model=llm["model"], small_model=llm["model"],
                                temperature=LLM_TEMPERATURE, base_url=llm["base_url"])
        self.graphiti = g.Graphiti(graph_driver=driver, llm_client=g.AnthropicClient(config, client=client),
                                      embedder=MiniLMEmbedder(), cross_encoder=OrderKeepingReranker(),
                                      store_raw_episode_content=True)

    def usage(self) -> Usage:
        with self._lock:
            return Usage(input_tokens=self._usage[0], output_tokens=self._usage[1], llm_calls=self._usage[2])

    def search_config(self, k: int):
        g = self.g
        return g.SearchConfig(
            edge_config=g.EdgeSearchConfig(
                search_methods=[g.EdgeSearchMethod.cosine_similarity, g.EdgeSearchMethod.bm25],
                reranker=g.EdgeReranker.rrf),
            episode_config=g.EpisodeSearchConfig(search_methods=[g.EpisodeSearchMethod.bm25],
                                                    reranker=g.EpisodeReranker.rrf),
            limit=k)


class GraphitiBackend(Backend):
    name = "graphiti"
    version = f"0.1 (graphiti-core {GRAPHITI_VERSION})"
    capabilities = Capabilities(provenance=True, snapshot=True, forget=False, scopes=False, time_aware=False,
                                flush_signal=True, deterministic=False)

    def __init__(self, llm: dict, data_dir: Path = DATA_DIR) -> None:
        from drift_sdk.minilm import MODEL_ID

        self.llm = llm
        self.internal_models = (llm["model"], MODEL_ID)
        self._embedder_id = MODEL_ID
        self.loop = _Loop()
        self.graph = Graph(data_dir, llm)
        self._spaces: dict[str, _Namespace] = {}

    def settings(self) -> dict[str, str]:
        return {
            "graphiti_core": GRAPHITI_VERSION,
            "graph_db": f"Kuzu {_dist_version('kuzu')} embedded, on disk (graphiti-core KuzuDriver; "
                        "FTS indexes created at startup)",
            "llm": f"anthropic {self.llm['model']} through graphiti's AnthropicClient (tool use), also as its "
                   f"small model; temperature {LLM_TEMPERATURE}; SDK retries {LLM_MAX_RETRIES}",
            "llm_base_url": self.llm["base_url"] or "(the anthropic SDK's default)",
            "embedder": f"{self._embedder_id}, onnxruntime CPU, 384 dims",
            "reranker": "none (RRF inside graphiti's search; no cross-encoder)",
            "namespace": "graphiti group_id drift_<sha256(namespace)[:24]>",
            "session": "one add_episode (source message, '<author>: <text>' lines, name = session id, "
                       "reference_time = session time)",
            "retrieve": "search_ on the group: facts (cosine + BM25, RRF) and episodes (BM25, RRF), k each, "
                        "merged by reciprocal rank (facts first on ties), cut to k",
            "provenance": "session-granular: a hit cites every message of the sessions (episodes) it came from",
            "snapshot": "every episode (raw session text) and every fact of the group; entity nodes and "
                        "their summaries are not listed",
            "telemetry": os.environ.get("GRAPHITI_TELEMETRY_ENABLED", ""),
        }

    # -- helpers ------------------------------------------------------------

    def _space(self, namespace: str) -> _Namespace:
        if not namespace:
            raise ValueError("empty namespace")
        space = self._spaces.get(namespace)
        if space is None:
            raise ValueError(f"unknown namespace {namespace!r}: call Reset first")
        return space

    @staticmethod
    def _sources(space: _Namespace, episode_uuids) -> tuple[str, ...]:
        out: list[str] = []
        for uuid in episode_uuids or ():
            episode = space.episodes.get(uuid)
            if episode is not None:
                out.extend(m for m in episode.message_ids if m not in out)
        return tuple(out)

    @staticmethod
    def _edge_time(space: _Namespace, edge) -> str:
        """When a fact became true in simulated time: its ``valid_at``, else its reference time,
        else the time of the first session it came from (never the wall-clock ``created_at``)."""
        when = edge.valid_at or getattr(edge, "reference_time", None)
        if when is not None:
            return _iso(when)
        for uuid in edge.episodes or ():
            if uuid in space.episodes:
                return space.episodes[uuid].time
        return ""

    @staticmethod
    def _fact_text(edge) -> str:
        ended = edge.invalid_at or edge.expired_at
        return f"{edge.fact} (no longer true since {_iso(ended)[:10]})" if ended else edge.fact

    # -- contract -----------------------------------------------------------

    def reset(self, namespace: str) -> None:
        if not namespace:
            raise ValueError("empty namespace")
        gid = group_id(namespace)
        self.loop.run(self.graph.driver.graph_ops.clear_data(self.graph.driver, group_ids=[gid]))
        self._spaces[namespace] = _Namespace(group_id=gid)

    def store(self, namespace: str, session) -> StoreResult:
        space = self._space(namespace)
        if not session.messages:
            return StoreResult(items_stored=0)
        when = _time(session.time or session.messages[0].timestamp)
        body = "\n".join(f"{m.author or m.role or 'user'}: {m.text}" for m in session.messages)
        before = self.graph.usage()
        result = self.loop.run(self.graph.graphiti.add_episode(
            name=session.session_id, episode_body=body, source_description="conversation session",
            reference_time=when, source=self.graph.g.EpisodeType.message, group_id=space.group_id))
        after = self.graph.usage()
        space.episodes[result.episode.uuid] = _Episode(session.session_id,
                                                       tuple(m.message_id for m in session.messages),
                                                       session.time or session.messages[0].timestamp)
        used = Usage(input_tokens=after.input_tokens - before.input_tokens,
                     output_tokens=after.output_tokens - before.output_tokens,
                     llm_calls=after.llm_calls - before.llm_calls)
        return StoreResult(items_stored=1 + len(result.edges), usage=used)

    def flush(self, namespace: str, timeout_s: float) -> bool:
        self._space(namespace)
        return True  # add_episode returns once the episode, nodes and edges are written

    def retrieve(self, namespace: str, query: str, k: int, querying_entity: str, now: str) -> list[Hit]:
        space = self._space(namespace)
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        if not space.episodes or not query.strip():
            return []
        results = self.loop.run(self.graph.graphiti.search_(query, config=self.graph.search_config(k),
                                                            group_ids=[space.group_id]))
        ranked: list[tuple[float, int, Hit]] = []
        for rank, edge in enumerate(results.edges):
            sources = self._sources(space, edge.episodes)
            if not sources:
                continue  # not from a session stored through this adapter: never guess provenance
            ranked.append((1.0 / (rank + 1), 0, Hit(text=self._fact_text(edge), score=1.0 / (rank + 1),
                                                    source_ids=sources, timestamp=self._edge_time(space, edge))))
        for rank, episode in enumerate(results.episodes):
            stored = space.episodes.get(episode.uuid)
            if stored is None:
                continue
            ranked.append((1.0 / (rank + 1), 1, Hit(text=episode.content, score=1.0 / (rank + 1),
                                                    source_ids=stored.message_ids, timestamp=stored.time)))
        ranked.sort(key=lambda r: (-r[0], r[1]))
        return [hit for _, _, hit in ranked[:k]]

    def snapshot(self, namespace: str) -> list[MemoryItem]:
        space = self._space(namespace)
        g, driver = self.graph.g, self.graph.driver
        items: list[MemoryItem] = []
        episodes = self.loop.run(g.EpisodicNode.get_by_group_ids(driver, [space.group_id]))
        for episode in episodes:
            stored = space.episodes.get(episode.uuid)
            items.append(MemoryItem(item_id=episode.uuid, text=episode.content,
                                    source_ids=stored.message_ids if stored else (),
                                    timestamp=stored.time if stored else _iso(episode.valid_at)))
        try:
            edges = self.loop.run(g.EntityEdge.get_by_group_ids(driver, [space.group_id]))
        except g.GroupsEdgesNotFoundError:  # graphiti raises for a group without facts
            edges = []
        for edge in edges:
            items.append(MemoryItem(item_id=edge.uuid, text=self._fact_text(edge),
                                    source_ids=self._sources(space, edge.episodes),
                                    timestamp=self._edge_time(space, edge)))
        items.sort(key=lambda i: (i.timestamp, i.text, i.item_id))
        return items


def main() -> None:
    try:
        llm = llm_settings()
    except ConfigError as exc:
        print(f"graphiti adapter: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None
    print(f"graphiti adapter: graphiti-core {GRAPHITI_VERSION}, {llm['model']} at "
          f"{llm['base_url'] or 'the default API root'}; data in {DATA_DIR}", file=sys.stderr, flush=True)
    serve(GraphitiBackend(llm))


if __name__ == "__main__":
    main()
