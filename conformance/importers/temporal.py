"""Dates in gold answers and questions, and the time expressions of messages.

The date check of :mod:`conformance.importers.quality` (``date_contradictions``) compares
what a gold answer (or a question) says about *when* with what the evidence messages say,
resolved against the dates of their sessions. Only English expressions of the shapes
public datasets use are read; anything else is left unread (the check then says nothing,
it never guesses). All dates are calendar dates (UTC); a span is inclusive.

* :func:`message_spans`: each time expression of a message resolved at its session date:
  "today" / "tonight" / "this morning" the day itself; "yesterday" / "last night" the day
  before; "N days ago" that day; "a few days ago" / "the other day" 2-7 days before;
  "last week" / "a week ago" 1-13 days before ("past week" 1-7); "N weeks ago" the week around N×7 days
  before; "last weekend" / "over the weekend" 1-9 days before; "N weekends ago" like N
  weeks; "last month" / "a month ago" the calendar month before; "N months ago" that
  calendar month give or take one; "last year" / "a year ago" the calendar year before;
  "N years ago" that year give or take one; "last <weekday>" / "this past <weekday>" the
  latest such day before; "this week", "this month", "this year" the period itself;
  "next week", "next month", "next year", "tomorrow", "the day after tomorrow" the period
  after; a stated year ("in 2022", "since 2016"), a stated month and year ("in May 2022")
  and a month and day ("July 20", the nearest such day to the session) themselves.
* :func:`answer_span`: a date an answer states: "7 May 2023", "May 7, 2023", "May 2023",
  "2022", or one anchored on a date ("the week before 9 June 2023", "the Friday before 15
  July 2023", "two weekends before ...", "the week of ...", "last week of May 2023").
* :func:`duration_days`: a length an answer states ("4 years", "15" to "how many weeks").
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

__all__ = ["Span", "AnswerDate", "message_spans", "answer_span", "question_spans", "duration_days",
           "MONTHS", "WEEKDAY_NAMES", "NUMBERS", "overlaps", "fmt", "date_text"]

Span = tuple[date, date, int | None]
"""(first day, last day, weekday named or None); Monday is 0."""

MONTHS = {name: i for i, name in enumerate(calendar.month_name) if name} | {
    name: i for i, name in enumerate(calendar.month_abbr) if name} | {"Sept": 9}
MONTHS = {k.lower(): v for k, v in MONTHS.items()}
WEEKDAYS = {"monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1, "wednesday": 2, "wed": 2, "thursday": 3,
            "thu": 3, "thur": 3, "thurs": 3, "friday": 4, "fri": 4, "saturday": 5, "sat": 5, "sunday": 6, "sun": 6}
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
           "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "couple": 2}
UNIT_DAYS = {"day": 1, "week": 7, "weekend": 7, "month": 30, "year": 365}

_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_WEEKDAY = "|".join(sorted(WEEKDAYS, key=len, reverse=True))
_N = r"\d{1,3}|a couple of|couple of|" + "|".join(sorted(NUMBERS, key=len, reverse=True))
_YEAR = r"(?:19|20)\d\d"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
# A month and day without a year ("July 20"): not "may" and "march", which are verbs too.
_DAY_MONTH = "|".join(sorted((m for m in MONTHS if m not in ("may", "march", "mar")), key=len, reverse=True))
FUTURE = ("tomorrow", "next", "in the coming")


def _number(text: str) -> int:
    text = text.strip().removesuffix(" of")
    if text.isdigit():
        return int(text)
    return NUMBERS.get(text) or NUMBERS.get(text.removeprefix("a "), 2)


def _month_span(year: int, month: int) -> tuple[date, date]:
    while month < 1:
        year, month = year - 1, month + 12
    while month > 12:
        year, month = year + 1, month - 12
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _year_span(year: int) -> tuple[date, date]:
    return date(year, 1, 1), date(year, 12, 31)


def _last_weekday(day: date, weekday: int) -> date:
    """The latest ``weekday`` strictly before ``day``."""
    return day - timedelta(days=(day.weekday() - weekday - 1) % 7 + 1)


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower().replace("\u2019", "'"))


_RELATIVE = re.compile(
    r"\b(?:(?P<today>today|tonight|this morning|this afternoon|this evening)"
    r"|(?P<yesterday>the day before yesterday|yesterday|last night)"
    r"|(?P<tomorrow>the day after tomorrow|tomorrow)"
    r"|(?P<few>a few days ago|few days ago|the other day)"
    r"|(?P<n>" + _N + r") (?P<unit>days?|weeks?|weekends?|months?|years?) ago"
    r"|(?:(?P<lastw>last|past|previous) (?P<period>week|weekend|month|year)|a (?P<ago>week|month|year) ago"
    r"|over the weekend)"
    r"|(?P<this>this|next) (?P<tperiod>week|weekend|month|year)"
    r"|(?:last|this past|past) (?P<wday>" + _WEEKDAY + r")\b"
    r"|(?P<fd_d>\d{1,2})(?:st|nd|rd|th)? (?:of )?(?P<fd_m>" + _MONTH + r")\.?,? (?P<fd_y>" + _YEAR + r")"
    r"|(?P<fd_m2>" + _MONTH + r")\.? (?P<fd_d2>\d{1,2})(?:st|nd|rd|th)?,? (?P<fd_y2>" + _YEAR + r")"
    r"|(?P<mname>" + _MONTH + r")\.? (?:of )?(?P<myear>" + _YEAR + r")"
    r"|(?P<md_m>" + _DAY_MONTH + r") (?P<md_d>\d{1,2})(?:st|nd|rd|th)?(?! ?,? ?\d)"
    r"|(?P<dm_d>\d{1,2})(?:st|nd|rd|th)? (?:of )?(?P<dm_m>" + _DAY_MONTH + r")(?! ?,? ?\d)"
    r"|(?:in|since|during|back in|of) (?P<year>" + _YEAR + r"))\b")


def message_spans(text: str, day: date, past: bool = False) -> list[Span]:
    """Every time expression of ``text`` (module docstring) resolved against ``day``, the
    date of its session, in the order they occur; with ``past``, only those that point
    back or at the day itself (no "tomorrow", "next month"). [] when it holds none."""
    out: list[Span] = []
    for m in _RELATIVE.finditer(_clean(text)):
        g = m.groupdict()
        if past and (g["tomorrow"] or g["this"] == "next"):
            continue
        try:
            _resolve(g, m.group(0), day, out)
        except (ValueError, OverflowError):  # "999 years ago" near year 1000: no such date
            continue
    return out


def _resolve(g: dict, said: str, day: date, out: list[Span]) -> None:
    """Append the span(s) of one matched expression (groups ``g``, text ``said``) to ``out``."""
    if g["today"]:
        out.append((day, day, None))
    elif g["yesterday"]:
        back = 2 if g["yesterday"].startswith("the day") else 1
        out.append((day - timedelta(days=back), day - timedelta(days=back), None))
    elif g["tomorrow"]:
        ahead = 2 if g["tomorrow"].startswith("the day") else 1
        out.append((day + timedelta(days=ahead), day + timedelta(days=ahead), None))
    elif g["few"]:
        out.append((day - timedelta(days=7), day - timedelta(days=2), None))
    elif g["n"]:
        n, unit = _number(g["n"]), g["unit"].rstrip("s")
        if unit == "day":
            out.append((day - timedelta(days=n), day - timedelta(days=n), None))
        elif unit in ("week", "weekend"):
            out.append((day - timedelta(days=7 * n + 6), day - timedelta(days=max(7 * n - 6, 1)), None))
        elif unit == "month":
            first, _ = _month_span(day.year, day.month - n - 1)
            _, last = _month_span(day.year, day.month - n + 1)
            out.append((first, last, None))
        else:
            out.append((date(day.year - n - 1, 1, 1), date(day.year - n + 1, 12, 31), None))
    elif g["lastw"] or g["ago"] or said == "over the weekend":
        period = g["period"] or g["ago"] or "weekend"
        if period == "week":
            out.append((day - timedelta(days=7 if g["lastw"] == "past" else 13), day - timedelta(days=1), None))
        elif period == "weekend":
            out.append((day - timedelta(days=9), day - timedelta(days=1), None))
        elif period == "month":
            out.append((*_month_span(day.year, day.month - 1), None))
        else:
            out.append((*_year_span(day.year - 1), None))
    elif g["this"]:
        step = 0 if g["this"] == "this" else 1
        period = g["tperiod"]
        if period in ("week", "weekend"):
            out.append((day + timedelta(days=1 if step else -6), day + timedelta(days=13 if step else 6), None))
        elif period == "month":
            out.append((*_month_span(day.year, day.month + step), None))
        else:
            out.append((*_year_span(day.year + step), None))
    elif g["wday"]:
        weekday = WEEKDAYS[g["wday"]]
        when = _last_weekday(day, weekday)
        out.append((when, when, weekday))
    elif g["fd_m"] or g["fd_m2"]:
        when = date(int(g["fd_y"] or g["fd_y2"]), MONTHS[g["fd_m"] or g["fd_m2"]], int(g["fd_d"] or g["fd_d2"]))
        out.append((when, when, None))
    elif g["mname"]:
        out.append((*_month_span(int(g["myear"]), MONTHS[g["mname"]]), None))
    elif g["year"]:
        out.append((*_year_span(int(g["year"])), None))
    elif g["md_m"] or g["dm_m"]:
        # The nearest such day to the session: "July 20" said on 9 July is 20 July.
        named = [date(day.year + k, MONTHS[g["md_m"] or g["dm_m"]], int(g["md_d"] or g["dm_d"]))
                 for k in (-1, 0, 1)]
        when = min(named, key=lambda d: abs((d - day).days))
        out.append((when, when, None))


@dataclass(frozen=True)
class AnswerDate:
    """What an answer (or question) says about when: ``span`` (first, last day), the
    ``weekday`` it names (0 Monday) and the ``anchor`` date it counts from, if any."""

    span: tuple[date, date]
    text: str
    weekday: int | None = None
    anchor: date | None = None


_FULL_DATE = re.compile(r"(?:(?P<d1>" + _DAY + r") (?:of )?(?P<m1>" + _MONTH + r")\.?|(?P<m2>" + _MONTH +
                        r")\.? (?P<d2>" + _DAY + r"))(?: (?P<y>" + _YEAR + r"))\b")
_MONTH_YEAR = re.compile(r"\b(?P<pos>(?:first|last|early|mid|late) (?:week )?(?:of )?)?(?P<m>" + _MONTH +
                         r")\.? (?:of )?(?P<y>" + _YEAR + r")\b")
_YEAR_ONLY = re.compile(r"(?:^|\b(?:in|since|during|of|around|summer|winter|spring|fall|autumn) )(?P<y>" + _YEAR +
                        r")\b")
_RELATION = re.compile(r"\b(?:(?P<n>" + _N + r"|few) )?(?P<unit>days?|weeks?|weekends?|months?|" + _WEEKDAY +
                       r") (?P<rel>before|after|of|prior to)\s*$")


def date_text(text: str) -> str:
    """``text`` lower-cased without commas, periods, backticks and ordinal suffixes ("7th" -> "7")."""
    return re.sub(r"(?<=\d)(?:st|nd|rd|th)\b", "", re.sub(r"[,.`]", " ", _clean(text))).strip()


def answer_span(text: str) -> AnswerDate | None:
    """The date ``text`` states (module docstring), or None when it states none that this
    reads. Ordinals, commas and a final period are ignored; "9June" (glued) is not read."""
    clean = re.sub(r"\s+", " ", date_text(text))
    full = _FULL_DATE.search(clean)
    if full:
        try:
            when = date(int(full["y"]), MONTHS[full["m1"] or full["m2"]], int(full["d1"] or full["d2"]))
        except ValueError:
            return None
        before = clean[:full.start()].strip()
        relation = _RELATION.search(before)
        if relation is None:
            return AnswerDate((when, when), full.group(0))
        return _relative_to(when, relation, full.group(0))
    month = _MONTH_YEAR.search(clean)
    if month:
        first, last = _month_span(int(month["y"]), MONTHS[month["m"]])
        pos = (month["pos"] or "").strip()
        if pos.startswith(("first", "early")):
            last = first + timedelta(days=9 if pos.startswith("early") else 6)
        elif pos.startswith(("last", "late")):
            first = last - timedelta(days=9 if pos.startswith("late") else 6)
        return AnswerDate((first, last), month.group(0))
    year = _YEAR_ONLY.search(clean)
    if year and len(clean.split()) <= 5:
        return AnswerDate(_year_span(int(year["y"])), year["y"])
    return None


def _relative_to(anchor: date, relation: re.Match, text: str) -> AnswerDate:
    unit, rel = relation["unit"], relation["rel"]
    sign = 1 if rel == "after" else -1
    n = _number(relation["n"]) if relation["n"] and relation["n"] != "few" else 1
    if unit in WEEKDAYS:
        weekday = WEEKDAYS[unit]
        if rel == "after":
            when = anchor + timedelta(days=(weekday - anchor.weekday() - 1) % 7 + 1)
        else:
            when = _last_weekday(anchor, weekday)
        return AnswerDate((when, when), text, weekday, anchor)
    unit = unit.rstrip("s")
    if rel == "of":
        return AnswerDate((anchor - timedelta(days=6), anchor + timedelta(days=6)), text, None, anchor)
    if relation["n"] == "few":
        near, far = 1, 7
    elif unit == "day":
        near = far = n
    elif unit == "month":
        near, far = 15 * n, 45 * n
    else:
        near, far = max(7 * n - 6, 1), 7 * n + 6
    ends = sorted((anchor + timedelta(days=sign * near), anchor + timedelta(days=sign * far)))
    return AnswerDate((ends[0], ends[1]), text, None, anchor)


_QUESTION_RELATIVE = re.compile(r"\b(?:last|this past) (?P<wday>" + _WEEKDAY + r")\b|\b(?P<n>" + _N +
                                r") (?P<unit>days?|weeks?|months?) ago\b|\b(?P<y>yesterday)\b")


def question_spans(question: str, asked: date | None) -> list[AnswerDate]:
    """When a question places the event: a date it states ("in October 2023") and, when
    the question date is known (``asked``), its relative expressions ("last Thursday")."""
    out = []
    stated = answer_span(question)
    if stated is not None:
        out.append(stated)
    if asked is not None:
        for m in _QUESTION_RELATIVE.finditer(_clean(question)):
            for first, last, weekday in message_spans(m.group(0), asked, past=True):
                out.append(AnswerDate((first, last), m.group(0), weekday, asked))
    return out


_DURATION = re.compile(r"^(?:about |around |approximately |roughly |nearly |almost |over |it's been |it has been )?"
                       r"(?P<n>\d{1,4}(?:\.\d+)?|" + "|".join(sorted(NUMBERS, key=len, reverse=True)) +
                       r")(?: (?P<unit>days?|weeks?|months?|years?))?\b")
_HOW_MANY = re.compile(r"\bhow (?:many|much) (?P<unit>days?|weeks?|months?|years?)\b|\bhow long\b")


def duration_days(answer: str, question: str) -> tuple[int, int] | None:
    """(days, days of its unit) of a length the answer states at its start ("4 years",
    "15 days. 16 (including the last day) is also accepted"); a bare number counts in the
    unit the question asks for ("How many weeks ..."). None when it states none."""
    match = _DURATION.match(date_text(answer))
    if match is None:
        return None
    asked = _HOW_MANY.search(_clean(question))
    unit = match["unit"] or (asked["unit"] if asked is not None and asked["unit"] else None)
    if unit is None or asked is None:
        return None
    n = float(match["n"]) if match["n"][0].isdigit() else NUMBERS[match["n"]]
    per = UNIT_DAYS[unit.rstrip("s")]
    days = round(n * (365.25 if per == 365 else 30.44 if per == 30 else per))
    return days, per


def overlaps(a: tuple[date, date], b: tuple[date, date]) -> bool:
    """True when spans ``a`` and ``b`` share a day; two single days may differ by one (a
    clock time near midnight, "last night")."""
    slack = 1 if a[0] == a[1] and b[0] == b[1] else 0
    return a[0] - timedelta(days=slack) <= b[1] and b[0] - timedelta(days=slack) <= a[1]


def fmt(span: tuple[date, date]) -> str:
    """``2023-05-20`` for one day, ``2023-05-01..2023-05-31`` for a span."""
    return span[0].isoformat() if span[0] == span[1] else f"{span[0].isoformat()}..{span[1].isoformat()}"
