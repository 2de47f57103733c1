"""Identifiers, versions and times of day, claimed before numbers are read: a URL, an e-mail
address, a host, an IPv4 address, a phone number, a version ("v2.4.0"), "14:30", "3 pm",
"15h30", "下午3点" or "午後3時" (and ranges of times: "2:00-4:00 pm", "2-4 pm", "下午2点至4点", where a
period written once holds for both ends). packaging canonicalises versions ("v2.4.0" == "2.4")."""

from __future__ import annotations

import re

from packaging.utils import canonicalize_version
from packaging.version import InvalidVersion, Version

from diagnose.text.value_types import Candidate

_TLDS = frozenset(
    """com net org io dev ai app co jp cn fr de uk us eu info biz gov edu mil int cloud tech me tv
    ru br in au ca es it nl se ch kr tw hk sg nz be at dk fi no pl pt cz ie il mx ar za local
    internal lan corp site online xyz""".split()
)
_URL = re.compile(r"(?<![A-Za-z])(?:https?|ftp)://[^\s<>\"'\])（）【】「」『』。，、；！？]+", re.I)
_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}(?![A-Za-z0-9])")
_HOST = re.compile(
    r"(?<![A-Za-z0-9@._-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+([A-Za-z]{2,24})(?![A-Za-z0-9_-]|\.[A-Za-z0-9])"
)
_IPV4 = re.compile(r"(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?::\d{1,5})?(?![\d]|\.\d)")
_PHONE = re.compile(
    r"(?<![A-Za-z0-9+.,/-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{1,5}(?:[ .-]\d{2,8}){1,4}(?![A-Za-z0-9]|[.,/-]\d)"
)
_VERSION = re.compile(
    r"(?:(?<![A-Za-z])(?:version|versión|ver\.?|release|build|バージョン|版本)\s*:?\s*|(?<![A-Za-z0-9])(?P<v>[vV])\s?)?"
    r"(?<![\d.])(?P<ver>\d+(?:\.\d+)*+(?:[-.]?(?:a|b|rc|alpha|beta|dev|post|pre)\.?\d*)?)(?!\w|\.\d)",
    re.I,
)
_CJK_PERIOD = {"上午": "a", "早上": "a", "午前": "a", "中午": "p", "下午": "p", "傍晚": "p", "晚上": "p", "午後": "p"}
"""Chinese and Japanese words for a part of the day written before an hour ("下午3点": 3 pm)."""
_TIME = re.compile(
    rf"(?:(?P<pre>{'|'.join(_CJK_PERIOD)})\s?)?"
    r"(?<![\d:.])(?:(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?::[0-5]\d)?(?:\s?(?P<ap>[ap])\.?m\.?(?![A-Za-z]))?"
    r"|(?P<h2>1[0-2]|0?[1-9])\s?(?P<ap2>[ap])\.?m\.?(?![A-Za-z])"
    r"|(?P<h3>[01]?\d|2[0-3])\s?[点點時时]\s?(?:(?P<m3>[0-5]?\d)\s?分(?!钟|鐘)|(?P<half>半)"
    r"|(?<=[点點時时])(?=\s?(?:至|到|から|[-–—~〜～]))|(?(pre)(?<=[点點時时])|(?!)))"  # a range, or after 下午
    r"|(?P<h4>[01]?\d|2[0-3])\s?h\s?(?P<m4>[0-5]\d)(?!\s?mi?n)"  # "2 h 30 min" is a span
    r"|(?P<h5>1[0-2]|0?[1-9])\.(?P<m5>[0-5]\d)\s?(?P<ap5>[ap])\.?m\.?(?![A-Za-z])"  # "9.30am", as British English writes it
    r"|(?<![A-Za-z])(?P<noon>(?-i:noon|midday|midnight))(?![A-Za-z]))(?![\d:])",  # not the film's "High Noon"
    re.I,
)
"""A time of day. A bare hour in Chinese or Japanese ("3点": also "3 points") only after a part of the
day ("下午") or at the start of a range ("2点至4点"); "15h30" as French writes it, never "8h" (a span)."""
_TIME_TO = re.compile(r"\s*(?:[-–—~〜～]|to|à|至|到|から)\s*", re.I)
_RANGE_END = re.compile(r"(?P<h>[01]?\d|2[0-3])\s?(?:[点點時时](?![間间])|h(?![A-Za-z]))(?![\d:])")
"""The far end of a range written as a bare hour ("至4点", "から5時", "à 16h"): an hour only there."""
_BARE_START = re.compile(
    r"(?<![\d:.,])(?P<h>1[0-2]|0?[1-9])(?=\s?(?:[-–—~]|to)\s?(?:1[0-2]|0?[1-9])(?::[0-5]\d)?\s?[ap]\.?m\.?(?![A-Za-z]))",
    re.I,
)
"""The near end of a range written as a bare hour before a time with its part of the day ("2-4 pm",
"9 to 11:30 am"): an hour only there."""


PART_OF_DAY = re.compile(rf"(?<![A-Za-z])[ap]\.?m\.?(?![A-Za-z])|{'|'.join(_CJK_PERIOD)}", re.I)
"""A part of the day written with an hour ("pm", "a.m.", "下午", "午前")."""


def _phone_ok(s: str) -> bool:
    digits = re.sub(r"\D", "", s)
    groups = [g for g in re.split(r"[ .()+-]+", s) if g]
    if not 7 <= len(digits) <= 15:
        return False
    if "+" in s or "(" in s:
        return True
    seps = set(re.findall(r"[ .-]", s))
    if len(groups) < 3 and len(digits) < 10:
        return False  # "85-264", "1998-2001"
    if all(len(g) == 4 and 1900 <= int(g) <= 2100 for g in groups):
        return False  # a row of years
    if seps <= {" ", "."} and len(seps) == 1 and len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:]):
        return False  # thousands: "12 345 678"
    if seps == {" "} and not all(len(g) >= 3 for g in groups[1:]):
        return len(groups) == 5 and all(len(g) == 2 for g in groups) and s[0] == "0"  # "01 23 45 67 89"
    return True


def version_key(ver: str) -> str:
    try:
        return "version:" + canonicalize_version(Version(ver), strip_trailing_zero=True)
    except InvalidVersion:
        return "version:" + ver.lower()


def _thousands_like(ver: str) -> bool:
    parts = ver.split(".")
    return len(parts[0]) <= 3 and all(len(p) == 3 and p.isdigit() for p in parts[1:])


def identifier_claims(w: str) -> list[Candidate]:
    out = []
    for m in _URL.finditer(w):
        s = m.group().rstrip(".,;:!?")
        out.append(Candidate(m.start(), m.start() + len(s), "identifier", "identifier:" + s.lower().rstrip("/"), prio=0))
    for m in _EMAIL.finditer(w):
        out.append(Candidate(m.start(), m.end(), "identifier", "identifier:" + m.group().lower(), prio=1))
    for m in _HOST.finditer(w):
        if m.group(1).lower() in _TLDS or m.group().lower().startswith("www."):
            out.append(Candidate(m.start(), m.end(), "identifier", "identifier:" + m.group().lower(), prio=7))
    for m in _IPV4.finditer(w):
        out.append(Candidate(m.start(), m.end(), "identifier", "identifier:" + m.group(), prio=4))
    for m in _PHONE.finditer(w):
        if _phone_ok(m.group()):
            out.append(Candidate(m.start(), m.end(), "identifier", "identifier:" + re.sub(r"\D", "", m.group()), prio=5))
    for m in _VERSION.finditer(w):
        ver = m.group("ver")
        has_context = m.group() != ver
        if not has_context and (ver.count(".") < 2 or _thousands_like(ver) or not ver[-1].isdigit()):
            continue
        start = m.start("v") if m.group("v") else m.start("ver")
        out.append(Candidate(start, m.end(), "version", version_key(ver), prio=6))
    times = _times(w)
    for a, b in zip(times, times[1:]):
        if _TIME_TO.fullmatch(w, a.end, b.start):
            lo, hi = _one_period(a, b)
            if a.bare and lo > hi:
                continue  # "10-12 a.m." ends at midnight: no range of one morning
            out.append(Candidate(a.start, b.end, "range", f"range:time_of_day:{lo:g}:{hi:g}", "[time_of_day]", None, 3))
    return out + [t.candidate for t in times if not t.bare]  # a bare hour is a time only in its range


class _Time:
    """A time of day found in a text: its candidate, and the part of the day its hour was written
    with (``a``, ``p``; None when written without one, on a 24-hour clock or alone)."""

    def __init__(self, start: int, end: int, hour: int, minute: int, period: str | None, bare: bool = False) -> None:
        self.start, self.end, self.hour, self.minute, self.period = start, end, hour, minute, period
        self.bare = bare  # the near end of a range written as a bare hour ("2" of "2-4 pm")
        seconds = self.seconds()
        self.candidate = Candidate(start, end, "quantity", f"quantity:time_of_day:{seconds}", "[time_of_day]", seconds, 3)

    def seconds(self, period: str | None = None) -> int:
        period = period or self.period
        hour = self.hour % 12 + (12 if period == "p" else 0) if period and self.hour <= 12 else self.hour
        return hour * 3600 + self.minute * 60


def _times(w: str) -> list[_Time]:
    times: list[_Time] = []
    for m in _TIME.finditer(w):
        noon = (m.group("noon") or "").lower()
        hour = (0 if noon == "midnight" else 12) if noon else int(
            m.group("h") or m.group("h2") or m.group("h3") or m.group("h4") or m.group("h5"))
        period = (m.group("ap") or m.group("ap2") or m.group("ap5") or "").lower() or _CJK_PERIOD.get(m.group("pre") or "")
        far = _TIME_TO.match(w, m.end())
        end = _RANGE_END.match(w, far.end()) if far else None
        if m.group("h3") and not (m.group("pre") or m.group("m3") or m.group("half") or end):
            continue  # "3点" alone may be three points
        minute = 30 if m.group("half") else int(m.group("m") or m.group("m3") or m.group("m4") or m.group("m5") or 0)
        times.append(_Time(m.start(), m.end(), hour, minute, period))
        if end and not _TIME.match(w, far.end()):
            times.append(_Time(end.start(), end.end(), int(end.group("h")), 0, None))
    taken = [(t.start, t.end) for t in times]
    times += [_Time(m.start(), m.end(), int(m.group("h")), 0, None, bare=True) for m in _BARE_START.finditer(w)
              if not any(a <= m.start() < b for a, b in taken)]
    return sorted(times, key=lambda t: t.start)


def _one_period(a: _Time, b: _Time) -> tuple[int, int]:
    """The seconds of a range's two ends, a part of the day written at one end holding for the other
    when that keeps the range in order: "2:00-4:00 pm" is 14:00-16:00, "10:00-2:00 pm" 10:00-14:00."""
    lo, hi = a.seconds(), b.seconds()
    if b.period and not a.period and a.seconds(b.period) <= hi:
        lo = a.seconds(b.period)
    if a.period and not b.period and b.seconds(a.period) >= lo:
        hi = b.seconds(a.period)
    return lo, hi
