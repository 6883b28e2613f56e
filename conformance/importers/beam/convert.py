"""Converting one BEAM conversation (as :mod:`conformance.importers.beam.source` read it) into
fixture sessions, probes and gold. The rules are in docs/import-formats.md#beam; each item
the conversion changes or drops is listed under one of :data:`ISSUE_KINDS`.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from conformance.contract.fixture import Message, Probe, SessionLine
from conformance.contract.gold import GoldProbe
from conformance.importers.quality import MAX_ANSWER_CHARS, QUALITY_KINDS, garbled_reason, gold_quality
from conformance.importers.report import ImportIssue
from conformance.importers.toolkit import fit_message, overlong_query, parse_session_time, raw_text, rfc3339, unique_id

SOURCE = "beam"
ABILITIES = (
    "abstention", "contradiction_resolution", "event_ordering", "information_extraction",
    "instruction_following", "knowledge_update", "multi_session_reasoning", "preference_following",
    "summarization", "temporal_reasoning",
)
ABSTENTION = "abstention"
SHORT_ANSWER_ABILITIES = frozenset({"event_ordering", "information_extraction", "knowledge_update",
                                    "multi_session_reasoning", "temporal_reasoning"})
"""Abilities whose items carry a short ``answer``; an item of one of them without it is a defect."""
RUBRIC_SUBTYPE = "rubric"
ISSUE_KINDS = (
    "rubric_graded", "malformed_evidence", "dangling_evidence", "integer_answers", "missing_answers",
    "unparseable_dates", "time_anchor_regressions", "duplicate_message_ids", "renumbered_ids",
    "malformed_records", *QUALITY_KINDS,
)
USER, ASSISTANT = "user", "assistant"
SESSION_STEP = timedelta(minutes=10)
MESSAGE_STEP = timedelta(seconds=30)
PROBE_DELAY = timedelta(days=1)
FALLBACK_ANCHOR = datetime(2000, 1, 1, tzinfo=timezone.utc)
"""Start of the first session when no turn of a conversation has a usable time anchor."""
DEFAULT_GAP_HOURS = 24.0


def _ability(key: object) -> str | None:
    """``"Multi-Session Reasoning"`` -> ``multi_session_reasoning``; None when it names no ability."""
    if not isinstance(key, str):
        return None
    name = re.sub(r"[\s\-]+", "_", key.strip().lower())
    return name if name in ABILITIES else None


def _as_int(value: object) -> tuple[int | None, bool]:
    """(the integer, whether it was given as text); (None, False) when it is no integer id."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value, False
    if isinstance(value, str) and re.fullmatch(r"\s*\d{1,18}\s*", value):
        return int(value), True
    return None, False


@dataclass
class _Turn:
    suffix: str
    """Session id suffix: ``b<batch>-t<turn>`` or ``p<plan>-b<batch>-t<turn>`` (1-based positions)."""
    location: str
    messages: list[tuple[str, object]]
    """(location, source message) in dataset order."""
    anchor: object = None
    anchor_location: str | None = None
    plan: int = 0
    """1-based plan of a 10M chat; 0 outside plans."""
    plan_location: str = ""


class Conversation:
    """Converts one BEAM conversation; problems go to the shared ``issues`` lists."""

    def __init__(self, scenario_id: str, issues: dict[str, list[ImportIssue]], counts: dict[str, int]):
        self.sid, self.issues, self.counts = scenario_id, issues, counts
        self.index: dict[int, str] = {}  # BEAM message id -> our message id (the first one)
        self.used: set[str] = set()
        self.unnamed = 0
        self.gap_hours = DEFAULT_GAP_HOURS

    def issue(self, kind: str, location: str, reason: str, resolution: str, item_id: str | None = None,
              raw: object = None) -> None:
        self.issues[kind].append(ImportIssue(
            scenario_id=self.sid, location=location, item_id=item_id,
            raw=None if raw is None else raw_text(raw)[:2000], reason=reason, resolution=resolution))

    # ---- chat layout --------------------------------------------------------------------
    def _turns(self, chat: object) -> list[_Turn]:
        if not isinstance(chat, list):
            self.issue("malformed_records", "chat", f"chat is a {type(chat).__name__}, not a list of batches",
                       "no sessions")
            return []
        turns: list[_Turn] = []
        flat: list[tuple[str, object]] = []
        plan = 0
        batch = 0
        for i, item in enumerate(chat):
            where = f"chat[{i}]"
            if isinstance(item, dict) and "role" in item:
                flat.append((where, item))  # a flat list of messages (no batches)
                continue
            if flat:
                batch += 1
                turns.extend(self._split(flat, f"b{batch}", "chat"))
                flat = []
            if isinstance(item, dict) and "turns" in item:
                batch += 1
                turns.extend(self._batch(item, where, f"b{batch}"))
            elif isinstance(item, list):
                batch += 1
                turns.extend(self._split([(f"{where}[{j}]", m) for j, m in enumerate(item)], f"b{batch}", where))
            elif isinstance(item, dict):
                values = [(k, v) for k, v in item.items() if v is not None]
                if not values:
                    self.issue("malformed_records", where, "plan object without a chat", "ignored", raw=item)
                for key, value in values:
                    plan += 1
                    turns.extend(self._plan(value, f"{where}.{key}", plan))
            else:
                self.issue("malformed_records", where, "neither a batch, a plan nor a message", "skipped", raw=item)
        if flat:
            batch += 1
            turns.extend(self._split(flat, f"b{batch}", "chat"))
        return turns

    def _plan(self, value: object, where: str, plan: int) -> list[_Turn]:
        if not isinstance(value, list):
            self.issue("malformed_records", where, "plan is not a list of batches", "skipped", raw=value)
            return []
        turns: list[_Turn] = []
        for b, item in enumerate(value):
            at = f"{where}[{b}]"
            if isinstance(item, dict) and "turns" in item:
                turns.extend(self._batch(item, at, f"p{plan}-b{b + 1}"))
            elif isinstance(item, list):
                turns.extend(self._split([(f"{at}[{j}]", m) for j, m in enumerate(item)], f"p{plan}-b{b + 1}", at))
            else:
                self.issue("malformed_records", at, "batch is neither an object with turns nor a list of messages",
                           "skipped", raw=item)
        for turn in turns:
            turn.plan, turn.plan_location = plan, where
        return turns

    def _batch(self, batch: dict, where: str, prefix: str) -> list[_Turn]:
        raw_turns = batch.get("turns")
        if not isinstance(raw_turns, list):
            self.issue("malformed_records", f"{where}.turns", "turns is not a list", "batch skipped", raw=raw_turns)
            return []
        turns = []
        for t, turn in enumerate(raw_turns):
            at = f"{where}.turns[{t}]"
            if not isinstance(turn, list):
                self.issue("malformed_records", at, "turn is not a list of messages", "skipped", raw=turn)
                continue
            turns.append(_Turn(f"{prefix}-t{t + 1}", at, [(f"{at}[{j}]", m) for j, m in enumerate(turn)]))
        anchor = batch.get("time_anchor")
        if turns and anchor is not None:
            turns[0].anchor, turns[0].anchor_location = anchor, f"{where}.time_anchor"
        return turns

    def _split(self, messages: list[tuple[str, object]], prefix: str, where: str) -> list[_Turn]:
        """A flat list of messages cut into turns at each ``main_question`` (as BEAM's script does)."""
        groups: list[list[tuple[str, object]]] = []
        for entry in messages:
            opens = isinstance(entry[1], dict) and entry[1].get("question_type") == "main_question"
            if not groups or (opens and groups[-1]):
                groups.append([])
            groups[-1].append(entry)
        return [_Turn(f"{prefix}-t{t + 1}", where, group) for t, group in enumerate(groups)]

    # ---- messages and sessions ----------------------------------------------------------
    def _renumber(self, turns: list[_Turn]) -> dict[int, int]:
        """Id offsets of the plans (10M chats) that restart the message ids: plan -> offset.
        As BEAM's download script combines plans, such a plan continues after the previous
        plan's last id."""
        ids: dict[int, list[int]] = {}
        where: dict[int, str] = {}
        for turn in turns:
            if turn.plan:
                where.setdefault(turn.plan, turn.plan_location)
                ids.setdefault(turn.plan, []).extend(
                    number for _, m in turn.messages if isinstance(m, dict)
                    for number in [_as_int(m.get("id"))[0]] if number is not None)
        offsets: dict[int, int] = {}
        last: int | None = None
        for plan, numbers in ids.items():
            if not numbers:
                continue
            offset = last + 1 if last is not None and min(numbers) <= last else 0
            if offset:
                self.issue("renumbered_ids", where[plan], "plan restarts the message ids of the plans before it",
                           f"its ids shifted by {offset}, as BEAM's download script combines plans", raw=min(numbers))
                self.counts["renumbered_plans"] += 1
            offsets[plan] = offset
            last = numbers[-1] + offset
        return offsets

    def _message(self, where: str, item: object, offset: int) -> tuple[str, str, str, str] | None:
        """(message id, author, role, text), or None when the message is unusable."""
        if not isinstance(item, dict) or item.get("role") not in (USER, ASSISTANT) \
                or not isinstance(item.get("content"), str):
            self.issue("malformed_records", where, "message lacks a user/assistant role or a content string",
                       "skipped", raw=item)
            return None
        number, as_text = _as_int(item.get("id"))
        if number is None:
            self.unnamed += 1
            message_id = unique_id(f"{self.sid}-x{self.unnamed}", self.used)
            self.issue("malformed_records", f"{where}.id", "message has no integer id",
                       f"named {message_id}; no evidence can name it", message_id, item.get("id"))
        else:
            if as_text:
                self.issue("malformed_records", f"{where}.id", "message id is text", f"read as {number}",
                           raw=item.get("id"))
            number += offset
            base = f"{self.sid}-m{number}"
            message_id = base if base not in self.used else unique_id(base + "-dup", self.used)
            if message_id != base:
                self.issue("duplicate_message_ids", f"{where}.id", "id already used by an earlier message",
                           f"renamed {message_id}; evidence {number} means the first message", message_id,
                           item.get("id"))
            self.used.add(message_id)
            self.index.setdefault(number, message_id)
        text = item["content"]
        text, cut = fit_message(text)
        if cut:
            self.issue("malformed_records", f"{where}.content", *cut, message_id)
        return message_id, item["role"], item["role"], text

    def _anchor(self, turn: _Turn) -> tuple[object, str | None]:
        for where, item in turn.messages:
            if isinstance(item, dict) and item.get("time_anchor") is not None:
                return item["time_anchor"], f"{where}.time_anchor"
        return turn.anchor, turn.anchor_location

    def _times(self, turns: list[_Turn], lengths: list[int]) -> list[datetime]:
        anchors = [self._anchor(t) for t in turns]
        parsed = [parse_session_time(a) if a is not None else (None, None) for a, _ in anchors]
        first = next((k for k, (m, _) in enumerate(parsed) if m is not None), None)
        times: list[datetime] = []
        floor: datetime | None = None
        for k, turn in enumerate(turns):
            moment, problem = parsed[k]
            raw, where = anchors[k]
            session_id = f"{self.sid}-{turn.suffix}"
            if moment is not None and floor is not None and moment < floor:
                self.issue("time_anchor_regressions", where or turn.location, f"time anchor {rfc3339(moment)} is "
                           f"before the end of the previous session ({rfc3339(floor)})",
                           f"set to {rfc3339(floor)}; dataset order kept", session_id, raw)
                moment = floor
            elif moment is None:
                if times:
                    moment = max(times[-1] + SESSION_STEP, floor)
                    how = "10 minutes after the previous session"
                elif first is not None:
                    moment, how = parsed[first][0] - SESSION_STEP * first, "before the first anchored session"
                else:
                    moment, how = FALLBACK_ANCHOR, "a fixed start (no turn of this conversation has an anchor)"
                if raw is not None:
                    self.issue("unparseable_dates", where, f"time anchor {problem}",
                               f"set to {rfc3339(moment)}, {how}", session_id, raw)
            times.append(moment)
            floor = moment + MESSAGE_STEP * max(lengths[k], 1)
        return times

    def sessions(self, chat: object) -> list[SessionLine]:
        turns = self._turns(chat)
        offsets = self._renumber(turns)
        kept: list[tuple[_Turn, list[tuple[str, str, str, str]]]] = []
        for turn in turns:
            offset = offsets.get(turn.plan, 0)
            messages = [m for where, item in turn.messages if (m := self._message(where, item, offset))]
            if not messages:
                self.issue("malformed_records", turn.location, "turn has no usable message", "skipped",
                           f"{self.sid}-{turn.suffix}")
                continue
            kept.append((turn, messages))
        times = self._times([t for t, _ in kept], [len(m) for _, m in kept])
        lines = []
        for index, ((turn, messages), start) in enumerate(zip(kept, times)):
            spoke = {author for _, author, _, _ in messages}
            lines.append(SessionLine(
                session_id=f"{self.sid}-{turn.suffix}", index=index, time=rfc3339(start),
                participants=[e for e in (USER, ASSISTANT) if e in spoke],
                messages=[Message(message_id=mid, author=author, role=role, text=text,
                                  timestamp=rfc3339(start + MESSAGE_STEP * j), scope="shared")
                          for j, (mid, author, role, text) in enumerate(messages)]))
        gaps = [(b - a).total_seconds() / 3600 for a, b in zip(times, times[1:])]
        if gaps and round(statistics.median(gaps), 3) > 0:
            self.gap_hours = round(statistics.median(gaps), 3)
        self.last_time = times[-1] if times else FALLBACK_ANCHOR
        return lines

    # ---- probes ---------------------------------------------------------------------------
    def _evidence(self, value: object, where: str, probe_id: str) -> list[str]:
        kept: list[str] = []

        def visit(item: object, at: str) -> None:
            if isinstance(item, dict):
                for key, sub in item.items():
                    visit(sub, f"{at}.{key}")
            elif isinstance(item, list):
                for j, sub in enumerate(item):
                    visit(sub, f"{at}[{j}]")
            else:
                number, as_text = _as_int(item)
                if number is None:
                    self.issue("malformed_evidence", at, "not a message id (a non-negative integer)", "dropped",
                               probe_id, item)
                    return
                target = self.index.get(number)
                if as_text:
                    self.issue("malformed_evidence", at, "message id given as text",
                               f"read as {number}" + ("" if target else ", which names no message: dropped"),
                               probe_id, item)
                if target is None:
                    if not as_text:
                        self.issue("dangling_evidence", at, "names no message of this conversation", "dropped",
                                   probe_id, item)
                elif target not in kept:
                    kept.append(target)

        if value is not None:
            visit(value, where)
        return kept

    def _rubric(self, value: object, where: str, probe_id: str) -> list[str]:
        if value is None:
            return []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            self.issue("malformed_records", where, "rubric is not a list of texts", "ignored", probe_id, value)
            return []
        lines = []
        for j, entry in enumerate(value):
            if isinstance(entry, str) and entry.strip():
                lines.append(entry.strip())
            elif isinstance(entry, (int, float)) and not isinstance(entry, bool):
                lines.append(str(entry))
            else:
                self.issue("malformed_records", f"{where}[{j}]", "rubric entry is not a text", "dropped",
                           probe_id, entry)
        return lines

    def _answer(self, item: dict, ability: str | None, where: str, probe_id: str) -> tuple[str, str | None]:
        """(gold answer, subtype) of a non-abstention item: its short ``answer``, else its rubric."""
        value = item.get("answer")
        if isinstance(value, str) and value.strip():
            return value, None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            self.issue("integer_answers", f"{where}.answer", f"answer is a number ({type(value).__name__}), not text",
                       f"kept as text {str(value)!r}", probe_id, value)
            return str(value), None
        rubric = self._rubric(item.get("rubric"), f"{where}.rubric", probe_id)
        empty = "kept with an empty answer (retrieval can still be scored from evidence)"
        if value is not None and not isinstance(value, str):
            self.issue("missing_answers", f"{where}.answer", f"answer is a {type(value).__name__}, not text",
                       "rubric used as gold" if rubric else "kept as JSON text", probe_id, value)
            if not rubric:
                return raw_text(value), None
        elif ability in SHORT_ANSWER_ABILITIES:
            self.issue("missing_answers", f"{where}.answer", "no answer",
                       "rubric used as gold" if rubric else empty, probe_id, value)
        elif not rubric:
            self.issue("missing_answers", f"{where}.rubric", "neither an answer nor a rubric", empty, probe_id)
        if not rubric:
            return "", None
        self.counts["rubric_probes"] += 1
        self.issue("rubric_graded", f"{where}.rubric", f"{ability or 'uncategorised'} item without a short answer; "
                   f"BEAM grades it against a {len(rubric)}-line rubric",
                   "gold answer = the rubric lines joined by newlines, subtype 'rubric'; counts only with an "
                   "answer model and a judge", probe_id)
        return "\n".join(rubric), RUBRIC_SUBTYPE

    def probes(self, questions: object) -> tuple[list[Probe], list[GoldProbe], dict[str, str]]:
        if questions is None:
            return [], [], {}
        if not isinstance(questions, dict):
            self.issue("malformed_records", "probing_questions", f"probing questions are a "
                       f"{type(questions).__name__}, not an object of ability -> items", "no probes")
            return [], [], {}
        asked_at = rfc3339(self.last_time + PROBE_DELAY)
        probes, gold, location_of = [], [], {}
        n = 0
        for key, items in questions.items():
            loc = f"probing_questions.{key}"
            ability = _ability(key)
            if ability is None:
                self.issue("malformed_records", loc, "unknown ability",
                           "its items get probe_type 'uncategorised'", raw=key)
            if not isinstance(items, list):
                self.issue("malformed_records", loc, "not a list of items", "skipped", raw=items)
                continue
            for i, item in enumerate(items):
                where, probe_id = f"{loc}[{i}]", f"{self.sid}-q{n:04d}"
                n += 1
                question = item.get("question") if isinstance(item, dict) else None
                if not isinstance(question, str) or not question.strip():
                    self.issue("malformed_records", where, "item without a question", "skipped", probe_id,
                               item if not isinstance(item, dict) else question)
                    continue
                if overlong_query(question):
                    self.issue("malformed_records", f"{where}.question", overlong_query(question), "skipped",
                               probe_id)
                    continue
                if ability == ABSTENTION:
                    answer, subtype = "unknown", None
                else:
                    answer, subtype = self._answer(item, ability, where, probe_id)
                evidence = self._evidence(item.get("source_chat_ids"), f"{where}.source_chat_ids", probe_id)
                location_of[probe_id] = where
                probes.append(Probe(probe_id=probe_id, asked_by=USER, query=question, asked_at=asked_at))
                gold.append(GoldProbe(probe_id=probe_id, checkpoint_id=f"{self.sid}-final",
                                      probe_type=ability or "uncategorised", subtype=subtype,
                                      abstention=ability == ABSTENTION, answer=answer, evidence=evidence))
        return probes, gold, location_of


def quality(sid: str, sessions: list[SessionLine], gold: list[GoldProbe], location_of: dict[str, str],
             probes: list[Probe]) -> dict[str, list[ImportIssue]]:
    """:func:`gold_quality`, less what a rubric cannot pass by design (module docstring).
    BEAM gives no question dates: ``asked_at`` is the importer's."""
    found = gold_quality(sid, sessions, gold, location_of, questions=probes, question_dates=False)
    rubric = {g.probe_id: g for g in gold if g.subtype == RUBRIC_SUBTYPE}
    for kind in found:
        if kind != "garbled_answers":
            found[kind] = [i for i in found[kind] if i.item_id not in rubric]
    found["garbled_answers"] = [
        i for i in found["garbled_answers"]
        if i.item_id not in rubric or garbled_reason(rubric[i.item_id].answer[:MAX_ANSWER_CHARS]) is not None]
    return found
