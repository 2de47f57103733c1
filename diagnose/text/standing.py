"""What a document says about its own standing: its date, whether it is archived, and what
replaced it, read from its text in English, Chinese, French and Japanese.

Only what the document says about ITSELF counts, so the vocabularies are small and
generic: status words (archived, superseded, withdrawn, no longer in effect, 已废止, 廃止,
abrogé...), successions (superseded by X, 被X取代, remplacé par X, Xに置き換え; a notice that
changes a value replaces what was stated before: extended to 22 November, 调整为3月15日) and dates
next to the words that date a document (effective, last updated, 生效日期, 自…起施行,
施行日, 改定, en vigueur le, mis à jour le...).

A status word is about the document itself when it stands

1. as a banner: alone at the start of a sentence (after a label such as ``Status:``,
   ``状态：`` or another status word) and followed by punctuation, in brackets, in capitals, or in the text's short
   first line; or
2. in a sentence whose subject is the document (this, le présent, 本, この...),

and in neither case after another document named in the same clause ("version 3",
"the previous policy", "which", 原, 旧...): "This version replaces version 3, which is no
longer in effect" archives nothing. Dates follow the same clause rule; the date of an
event ("superseded by version 4 on 1 February 2026") is not the document's date. Of the
document's own dates the newest is taken; without one, a date in the text's short first
line (its title) is.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from typing import Literal

from diagnose.text.dates import dates_in

__all__ = ["TextStanding", "read_standing"]


@dataclasses.dataclass(frozen=True)
class TextStanding:
    """What a document's text says about its own standing (all None: nothing)."""

    date: datetime.date | None = None
    """The document's own effective, updated or published date."""
    authority: Literal["archived"] | None = None
    """``archived`` when the text says it is archived, superseded, withdrawn or no longer valid."""
    superseded_by: str | None = None
    """The successor it names ("version 4"), when it says it was superseded or replaced."""
    replaces: str | None = None
    """The predecessor it names ("version 3"), when it says it replaces one (the words that say
    so where it names none: "is hereby amended", or a notice's "extended to" before a new date)."""
    evidence: str | None = None
    """The sentence that says it is archived, else the words that date it."""


_I = re.I | re.X
_ARCHIVED = re.compile(r"""
    \b(?:archived|superseded|withdrawn|obsolete|rescinded|repealed|deprecated|expired|out\ of\ date|outdated)\b
  | \bno\ longer\ (?:in\ (?:effect|force|use)|valid|current|applies|applicable|maintained|supported|updated)\b
  | \b(?:previous|former|old|older|historical|earlier)\ (?:version|edition|revision)\b
  | \b(?:archivée?s?|abrogée?s?|obsolètes?|caduque?s?|périmée?s?|retirée?s?)(?!\w)
  | \bn['’]est\ plus\ (?:en\ vigueur|valable|applicable|à\ jour)
  | \b(?:ancienne\ version|version\ (?:précédente|antérieure))\b
  | (?:已|被)?(?:废止|作废|失效|归档|过时)|不再(?:适用|有效|生效|执行|使用)|旧(?:规定|政策|版本|制度)
  | 廃止|失効|アーカイブ|旧版|効力を失|最新(?:版)?ではありません
  | \b(?:was|were|has\ been|have\ been)\ replaced\b|\breplaced\ (?=on|in|as\ of|effective|from)\b|(?<=,\ )replaced(?=\s*[)\]）])
  | \b(?:a|ont)\ été\ remplacée?s?(?!\w)|\bremplacée?s?\ (?=le|en|au|depuis|à\ compter|à\ partir)\b|(?<=,\ )remplacée?s?(?=\s*[)\]）])
  | 已(?:经)?无效|(?:現在は|すでに|既に)無効|無効(?:と|に)なりました
""", _I)
_SUCCESSOR = (
    re.compile(r"\b(?:superseded|replaced)\s+by\s+(?P<name>[^.;:,()\n]{1,60})", re.I),
    re.compile(r"\bremplacée?s?\s+par\s+(?P<name>[^.;:,()\n]{1,60})", re.I),
    re.compile(r"[被由](?P<name>[^，。；、,.;\s]{1,30}?)所?(?:取代|替代|代替|替换)"),
    re.compile(r"(?P<name>[^、。，,\sはがを]{1,30}?)(?:に|によって|により)(?:置き換え|置換|代替)"),
)
_PREDECESSOR = (
    re.compile(r"\b(?:replaces|supersedes|remplace|abroge)\s+(?P<name>[^.;:,()\n]{1,60})", re.I),
    # an amendment's own wording, which names no predecessor after it: "… is hereby deleted and replaced with"
    re.compile(r"\b(?:is|are)\s+hereby\s+(?:amended|replaced|deleted|revoked)(?P<name>)", re.I),
    re.compile(r"(?<![被由已])(?:取代|替代|代替)(?P<name>[^，。；、,.;\s]{1,30})"),
    re.compile(r"(?P<name>[^、。，,\sはがを]{1,30}?)に代わる"),
    # a notice of a changed value, which replaces what was stated before: "extended to Friday, 22
    # November", "reporté au 3 mars", "调整为3月15日", "4月30日に延長". The new figure follows at once
    # (after a day's or month's name) or, in Japanese, precedes; a rule's "may be extended to 6
    # months" (可延长至, 延長できる) and a history's "moved to Medellin in 2002" change nothing.
    re.compile(r"""(?<!can\ be\ )(?<!may\ be\ )(?<!could\ be\ )(?<!might\ be\ )
                   \b(?i:extended|postponed|moved|rescheduled|pushed\ back|brought\ forward|changed|adjusted|updated
                   |amended|increased|raised|reduced|decreased|lowered|cut)\s+(?i:to|until|till)\b(?P<name>)
                   (?=\s*(?:(?:(?:Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.,?
                   |[A-Z][a-z]*,?)\s+){0,2}[$€£¥]?\d)""", re.X),
    re.compile(r"\b(?:prolongée?s?|reportée?s?|repoussée?s?|décalée?s?|avancée?s?|modifiée?s?|augmentée?s?"
               r"|réduite?s?|baissée?s?|relevée?s?|portée?s?)\s+"
               r"(?:au|à|jusqu['’](?:au|à))(?P<name>)"
               r"(?=\s*(?:(?:lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche)\s+)?\d)", re.I),
    re.compile(r"(?<![可能])(?:调整|延长|延期|推迟|提前|变更|更改|修改|改|上调|下调|提高|降低|增加|减少)(?:为|至|到)(?P<name>)(?=\d)"),
    re.compile(r"\d[^。、\n]{0,12}?[にへ](?:変更|延長|延期|繰り上げ|繰り下げ|値上げ|値下げ|引き上げ|引き下げ)(?P<name>)"
               r"(?!でき|可能|する場合|することが)"),
)
#: Words that date the document, before its date ("effective 1 March 2023", "施行日：…").
_DATE_BEFORE = re.compile(r"""
    (?<!longer\ )\beffective(?:\ date)?|\b(?:last\ )?(?:updated|revised)|\blast\ (?:reviewed|modified)|\bpublished
  | \b(?:applies|applicable|in\ force)\ (?=from|since|as\ of)|\bversion\ (?:dated|of|du)
  | ^\s*(?:with\ effect\ from|à\ compter\ du|à\ partir\ du|dès\ le)(?=\s)
  | \bdate\ (?:of\ )?(?:effect|issue|publication|revision)|\bvalid\ (?:from|since|as\ of)|^\s*date
  | (?<!plus\ )(?<!pas\ )\ben\ vigueur|\bmise?\ à\ jour|\bdernière\ (?:mise\ à\ jour|révision|modification)
  | \b(?:révisée?|publiée?|modifiée?|applicable)|\bdate\ d['’](?:effet|entrée\ en\ vigueur|application|publication)
  | (?:生效|施行|实施|发布|更新|修订)日期|最后更新|(?:更新|发布|修订)于
  | 施行日|発効日|改定日|改訂日|更新日|最終更新日?|発行日|制定日|公開日
""", _I | re.M)
_GAP_BEFORE = re.compile(r"""[\s:：,\-–—(]*(?:(?:on|in|from|as\ of|since|le|en|du|depuis|à\ compter\ du|à\ partir\ du
                             |dès|en\ date\ du|于|は)\s*){0,2}$""", _I)
#: Words that date the document, after its date ("2026年2月1日起施行", "2026年2月1日改定").
_DATE_AFTER = re.compile(r"\s*(?:起|から|より|以降)?\s*(?:施行|生效|实施|修订|发布|更新|発効|改定|改訂|制定|発行)(?![的の])")
_LABEL = re.compile(r"\b(?:status|state|note|notice|warning|statut|état|avis|remarque)\b|状态|状態|注意|说明|备注|注",
                    re.I)
_SELF = re.compile(r"\b(?:this|the\ present|ce|cet|cette|le\ présent|la\ présente)\b|(?<![\u3040-\u30ff\u4e00-\u9fff])本|この",
                   _I)
_VERSION_WORDS = r"\b(?:version|v|edition|revision|rev)\.?\s*\d"
_VERSION = re.compile(_VERSION_WORDS, re.I)
_OTHER = re.compile(rf"""
    {_VERSION_WORDS}|\b(?:previous|former|old|older|earlier|prior|original|which|whose)\b
  | \b(?:ancien(?:ne)?s?|précédente?s?|antérieure?s?|lequel|laquelle|dont)\b|原|旧|前版|上一版|第\s*\d+\s*版|従来|前の
""", _I)
_SENTENCE_END = re.compile(r"[.!?](?=\s)|[。！？\n]")
_CLAUSE_END = re.compile(r"[.!?;,](?=\s)|[。！？；，、;\n]|\s[-–—]\s")
_BRACKETS = ("[]", "()", "【】", "（）", "«»", "「」", "『』", "〔〕")
_TRAILING_LINK = re.compile(r"""\s+(?:on|as\ of|effective|from|since|and|which|with\ effect|le|du|depuis|à\ compter|à\ partir
                            |dès|et|qui|en\ date)\b.*$""", _I | re.S)
_FIRST_LINE_MAX = 100
_NOTE_END = re.compile(r"[^\S\n]*(?:[.!?。！？;；:：]|\n|$)")


def read_standing(text: str) -> TextStanding:
    """What ``text`` says about its own standing (see the module docstring)."""
    archived = next((m for m in _status_marks(text) if _about_itself(text, m.start(), m.end())), None)
    successor = next((m for p in _SUCCESSOR for m in p.finditer(text) if _about_itself(text, m.start(), m.end())),
                     None)
    predecessor = next((m for p in _PREDECESSOR for m in p.finditer(text)
                        if not _inside(m.start(), successor)), None)
    dated = _own_dates(text)
    day, date_words = max(dated, key=lambda d: d[0]) if dated else (None, None)
    mark = archived or successor
    return TextStanding(
        date=day,
        authority="archived" if mark else None,
        superseded_by=_name(text, successor) if successor else None,
        replaces=(_name(text, predecessor) or predecessor.group().strip()) if predecessor else None,
        evidence=_sentence(text, mark.start()) if mark else date_words,
    )


def _status_marks(text: str) -> list[re.Match[str]]:
    return [*_ARCHIVED.finditer(text), *(m for p in _SUCCESSOR for m in p.finditer(text))]


def _about_itself(text: str, start: int, end: int) -> bool:
    """The status word at ``text[start:end]`` speaks of the document itself."""
    clause_start = _start_of(text, start, _CLAUSE_END)
    if _names_another(text[clause_start:start], opening=clause_start == 0):
        return False
    sentence = text[_start_of(text, start, _SENTENCE_END) : start]
    return _banner(text, sentence, start, end) or bool(_SELF.search(sentence))


def _banner(text: str, sentence: str, start: int, end: int) -> bool:
    words = text[start:end]
    before, after = text[start - 1 : start], text[end : end + 1]
    bracketed = any(before == o and after == c for o, c in _BRACKETS) or _opens_bracketed_clause(text, start)
    alone = not re.sub(r"[\W_]+", "", _LABEL.sub("", _ARCHIVED.sub("", sentence))) \
        and re.match(r"\s*(?:[^\w\s]|$)", text[end:]) is not None  # "ARCHIVED -", not "Archived emails"
    first_line = "\n" not in text[:start] and _title_end(text) is not None
    return bracketed or alone or first_line or (words.isupper() and len(words) >= 5)


def _opens_bracketed_clause(text: str, start: int) -> bool:
    """Whether ``start`` opens a clause of a bracketed note that ends its sentence or heading: "… 150
    euros a night (2022 policy, superseded on 1 January 2026).", "Old rules (2022, superseded): …" (not
    "the valve (replaced in March) must…")."""
    for o, c in _BRACKETS:
        opened, closed = text.rfind(o, 0, start), text.find(c, start)
        if opened < 0 or closed < 0 or text.rfind(c, opened, start) >= 0 \
                or not _NOTE_END.match(text, closed + len(c)):
            continue
        clause = text[max(opened + 1, _start_of(text, start, _CLAUSE_END)):start]
        if not re.sub(r"[\W_]+", "", clause):
            return True
    return False


def _names_another(clause: str, opening: bool = False) -> bool:
    """The clause names a document other than this one ("version 3", "which", 原...);
    "this version 4" names this one, and so does a version after the name that opens the text
    (``opening``: the clause is the text's first), its title: "Travel policy v4 (effective …)",
    not "Version 3 is withdrawn"."""
    for m in _OTHER.finditer(clause):
        before = clause[: m.start()]
        if re.search(r"(?:" + _SELF.pattern + r")\s*\S{0,12}\s*$", before, _I):
            continue
        if opening and _VERSION.match(m.group()) and re.search(r"\w", before):
            continue
        return True
    return False


def _own_dates(text: str) -> list[tuple[datetime.date, str]]:
    """The document's own dates, each with the words that date it."""
    title_end = _title_end(text)
    found, titled = [], []
    for start, end, day in dates_in(text):
        clause_start = _start_of(text, start, _CLAUSE_END)
        before = text[clause_start:start]
        marker = next((m for m in _DATE_BEFORE.finditer(before) if _GAP_BEFORE.match(before, m.end())), None)
        after = _DATE_AFTER.match(text, end)
        words_start = clause_start + marker.start() if marker else start
        if _names_another(text[clause_start:words_start], opening=clause_start == 0):
            continue
        if marker or after:
            found.append((day, text[words_start : after.end() if after else end].strip()))
        elif title_end is not None and end <= title_end and _standalone(text, clause_start, start, end):
            titled.append((day, text[start:end]))
    return found or titled


def _title_end(text: str) -> int | None:
    """Where the text's first line ends, when it is a short title above more lines."""
    end = text.find("\n")
    return end if 0 < end <= _FIRST_LINE_MAX and text[end:].strip() else None


def _standalone(text: str, clause_start: int, start: int, end: int) -> bool:
    """The date at ``text[start:end]`` stands alone in its clause ("Policy — 1 March 2023")."""
    before = text[clause_start:start]
    alone = not re.sub(r"[\W_]+", "", before) or before.rstrip().endswith(("(", "（"))
    return alone and re.match(r"[^\S\n]*[)）]?[^\S\n]*(?:\n|$)", text[end:]) is not None


def _start_of(text: str, at: int, boundary: re.Pattern[str]) -> int:
    ends = [m.end() for m in boundary.finditer(text, 0, at)]
    return ends[-1] if ends else 0


def _inside(at: int, match: re.Match[str] | None) -> bool:
    return match is not None and match.start() <= at < match.end()


def _name(text: str, match: re.Match[str]) -> str | None:
    """The named successor or predecessor, cut before a linking word ("version 4 on 1 May")."""
    start, end = match.span("name")
    name = _TRAILING_LINK.sub("", text[start:end]).strip(" \t-–—")
    return name or None


def _sentence(text: str, at: int) -> str:
    start = _start_of(text, at, _SENTENCE_END)
    end = _SENTENCE_END.search(text, at)
    return text[start : end.end() if end else len(text)].strip()[:200]
