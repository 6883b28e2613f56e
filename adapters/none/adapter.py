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

    def __init__(self) -> None:
        # Names only: the control keeps no content, but refuses a namespace never Reset
        # like any memory would (the contract's errors check).
        self._namespaces: set[str] = set()

    def _known(self, namespace: str) -> None:
        if namespace not in self._namespaces:
            raise ValueError(f"unknown namespace {namespace!r}: call Reset first")

    def reset(self, namespace):
        if not namespace:
            raise ValueError("namespace is empty")
        self._namespaces.add(namespace)

    def store(self, namespace, session):
        self._known(namespace)
        return StoreResult(items_stored=0)

    def flush(self, namespace, timeout_s):
        self._known(namespace)
        return True

    def retrieve(self, namespace, query, k, querying_entity, now):
        self._known(namespace)
        return []

    def snapshot(self, namespace) -> list[MemoryItem]:
        self._known(namespace)
        return []

    def forget(self, namespace, source_ids):
        self._known(namespace)
        return 0


if __name__ == "__main__":
    serve(NoneBackend())
