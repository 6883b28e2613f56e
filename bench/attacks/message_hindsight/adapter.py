"""Attack on the state audit's across-checkpoint rule (`hindsight`, caught by `held_again`), one
level down: that rule compares the *sessions* a Snapshot holds from one checkpoint to the next,
and a session is held while one of its messages is. So at each checkpoint this keyword shows, and
answers from, only the messages of the sessions streamed since the previous checkpoint, the
messages among the top hits (ranked over everything it keeps) of every question asked at an
earlier checkpoint, and for every other older session one anchor: its shortest message of three
or more content words. Every session stays held from checkpoint to checkpoint, so nothing is
"held again"; a message hidden at one checkpoint comes back at the next when a question asked
since makes it relevant. Targets storage tokens, MVOT, TES, DRIFT-C, DRIFT-E."""

import importlib.util
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location("hindsight_adapter",
                                               Path(__file__).resolve().parents[1] / "hindsight" / "adapter.py")
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)

from drift_sdk import serve  # noqa: E402

TOP = 5
"""Messages kept per earlier question."""


class MessageHindsight(_mod.Hindsight):
    name = "message-hindsight"

    def store(self, namespace, session):
        st = self._state[namespace]
        st.setdefault("messages", {})[session.session_id] = [
            (m.message_id, len(_mod.stems(m.text)), len(m.text)) for m in session.messages if m.scope != "private"]
        return super().store(namespace, session)

    def snapshot(self, namespace):
        st = self._state[namespace]
        st["asked"] += st["pending"]
        st["pending"] = []
        new = set(st["order"][st["seen_upto"]:])
        shown = {d.message_id for d in self._space(namespace).docs if _mod.session_of(d.message_id) in new}
        for query, entity, now in st["asked"]:
            shown.update(h.source_ids[0] for h in self._ranked(namespace, query, TOP, entity, now))
        for sid in st["order"][:st["seen_upto"]]:
            anchors = sorted((n, mid) for mid, words, n in st["messages"].get(sid, []) if words >= 3)
            if anchors and not any(mid in shown for mid, _, _ in st["messages"][sid]):
                shown.add(anchors[0][1])
        st["seen_upto"], st["shown"] = len(st["order"]), shown
        return [item for item in super(_mod.Hindsight, self).snapshot(namespace) if item.source_ids[0] in shown]

    def retrieve(self, namespace, query, k, querying_entity, now):
        st = self._state[namespace]
        if st["shown"] is None:
            return self._ranked(namespace, query, k, querying_entity, now)
        if not self._audit_like(namespace, query):
            st["pending"].append((query, querying_entity, now))
        hits = self._ranked(namespace, query, 50 * k, querying_entity, now)
        return [h for h in hits if h.source_ids[0] in st["shown"]][:k]


if __name__ == "__main__":
    serve(MessageHindsight())
