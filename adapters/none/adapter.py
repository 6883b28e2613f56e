"""The amnesiac control: stores nothing, retrieves nothing.

Every run carries it so each system's score is read against what no memory at
all achieves (the comparison guide's ``none`` control, DRIFT's amnesiac baseline).
"""

from drift_sdk import Backend, Capabilities, MemoryItem, StoreResult, serve


class NoneBackend(Backend):
    name = "none"
    version = "1"
    capabilities = Capabilities(provenance=True, snapshot=True, forget=True, flush_signal=True,
                                deterministic=True)

    def reset(self, namespace):
        return None

    def store(self, namespace, session):
        return StoreResult(items_stored=0)

    def flush(self, namespace, timeout_s):
        return True

    def retrieve(self, namespace, query, k, querying_entity, now):
        return []

    def snapshot(self, namespace) -> list[MemoryItem]:
        return []

    def forget(self, namespace, source_ids):
        return 0


if __name__ == "__main__":
    serve(NoneBackend())
