"""What the reader is asked of one document, and how its reply is read.

One prompt per document, the same for every engine (in-process llama.cpp or an
OpenAI-compatible server), so that a server serving the same weights gives the same
readings (or nearly: where two tokens are near-tied, two engines may word a reply apart).
The system message and the question come first, then the document: every document of a
case shares that head (the root of the prompt tree), and every case of one kind (open,
yes/no: :data:`SYSTEM`, :data:`YES_NO_SYSTEM`) shares the system message, so an engine that
keeps its key/value cache evaluates them once.

The question is asked once more below the document (:data:`OPEN_AGAIN`, :data:`YES_NO_AGAIN`):
the reader then answers from the document it has just read. The reply is two lines:

1. the answer from this document alone (``yes``/``no`` for a yes/no question: there only
   its first token is decoded, for the yes-minus-no margin), or ``not stated``;
2. ``About:`` the thing the answer is about (a name and a kind), so that two things of one
   name never share a center because a number matches.

The system message's example comes with its own question, so that the reader does not copy
it as the answer of a document that states nothing.

A document's own date and status are read from its fields and its text
(:mod:`diagnose.text.standing`), not asked of this model: asked, a date line copied dates
that were not the document's own and cost a third of the reply's tokens, and a status
line called a passage superseded because it said a label "was changed" (measured on
made-up documents, docs/input-stage.md). :func:`parse_reply` still reads ``Date:`` and
``Status:`` lines when a reader writes them.

:func:`parse_reply` reads the lines leniently: a missing line is None, never an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["NOT_STATED", "OPEN_AGAIN", "ReplyFields", "SYSTEM", "YES_NO_AGAIN", "YES_NO_SYSTEM", "messages",
           "parse_reply"]

_LINE_1 = (
    "You read one document and report what it says. Reply with exactly two lines and nothing else.\n"
    "Line 1: the answer to the question according to this document alone, as short as possible "
    "(a value with its unit, a date, a name, or yes or no for a yes/no question). "
    "Write not stated if the document does not answer the question.\n"
)
"""The reply's first line, as both system messages ask for it."""
_EXAMPLE_REPLY = "4.5 kg\nAbout: Trailmaster X2, a hiking backpack"

SYSTEM = (
    _LINE_1
    + "Line 2: About: the thing this document's answer is about (a person, a company, a sports team, "
    "a product, a policy...): the name the document gives it and what kind of thing it is.\n"
    "For example, to the question \"How much does the Trailmaster X2 weigh?\" a page about that "
    "backpack gives this reply:\n"
    + _EXAMPLE_REPLY
)

YES_NO_SYSTEM = (
    _LINE_1
    + "Line 2: About: what this document describes, as the document itself says: the name it uses "
    "and what kind of thing it is (a person, a company, a sports team, a product, a policy...).\n"
    "Example of a reply:\n"
    + _EXAMPLE_REPLY
)
"""The system message of a yes/no question, whose reply is only its first token's yes-minus-no
margin: the earlier wording of :data:`SYSTEM`, kept because the margins separate opposing from
agreeing passages better under it (conflictqa-dev, 200 pairs: ``yes_gap`` AUROC 0.87, under
:data:`SYSTEM` 0.85). Every document of a case still shares one head."""

NOT_STATED = "not stated"
MAX_FIELD_CHARS = 160
_LABEL = re.compile(r"^\s*(?:line\s*\d\s*:\s*)?(?:the\s+)?(answer|about|date|status)(?:\s+is)?\s*[:：]\s*",
                    re.IGNORECASE)
_NONE = {"", "none", "n/a", "na", "unknown", "not stated", "not given", "no date"}
_LINE_NUMBER = re.compile(r"^\s*line\s*\d\s*[:.)]\s*", re.IGNORECASE)
"""The reply's layout copied into it: "Line 1: 1905" (the system message numbers the lines)."""
_ANSWER_IS = re.compile(r"^(?:the\s+)?answer\s+is\s+(?=\S)", re.IGNORECASE)
"""The answer line introduced in words ("The answer is the Second Boer War")."""
_INLINE_ABOUT = re.compile(r"\s+about\s*[:：]\s*", re.IGNORECASE)
"""The second line written on the first ("Football. About: Vestri, a football club")."""
_SAYS_NOTHING = re.compile(
    r"\b(?:not|never)\s+(?:stated|mentioned|given|provided|specified|say|said|state|mention|specify|provide)\b"
    r"|\bno\s+(?:information|mention)\b", re.IGNORECASE)
"""A sentence that says the document does not answer ("... is not mentioned in the document")."""


@dataclass(frozen=True)
class ReplyFields:
    answer: str
    """The first line, stripped (``not stated`` kept as written)."""
    about: str | None
    date: str | None
    """As the reader wrote it (the stage parses it with the project's date parser)."""
    superseded: bool


YES_NO_AGAIN = "\n\nAccording to this document alone, answer yes or no: {question}"
"""Asked again after the document, for a yes/no question: the first token's yes-minus-no margin
then separates opposing from agreeing passages better (conflictqa-dev, 200 pairs: AUROC of
the widest gap between two documents' P(yes) 0.82 -> 0.87), and the head the documents share
stays the same."""


OPEN_AGAIN = ("\n\nAccording to this document alone: {question}\n"
              "Reply with the two lines: the answer, then About: the thing the answer is about.")
"""Asked again after the document, for an open question, with the reply's layout: on the reference
readings of enterprise-dev and the first 40 ramdocs-dev cases, ARI 0.68 -> 0.70 and 0.60 -> 0.69
(docs/input-stage.md); asked without the layout, the reader dropped its ``About:`` line."""


def messages(question: str, document: str, yes_no: bool = False) -> list[dict[str, str]]:
    """The chat messages for one (already truncated) document: question first, then the document,
    then the question once more (:data:`YES_NO_AGAIN` for a yes/no question, ``yes_no``, else
    :data:`OPEN_AGAIN`)."""
    again = (YES_NO_AGAIN if yes_no else OPEN_AGAIN).format(question=question)
    return [
        {"role": "system", "content": YES_NO_SYSTEM if yes_no else SYSTEM},
        {"role": "user", "content": f"Question: {question}\n\nDocument:\n{document}{again}"},
    ]


def parse_reply(text: str) -> ReplyFields:
    """The four fields of a reply (see the module docstring); missing ones are None/False. The
    answer line is read without the words that introduce it ("The answer is …") and without a
    second line written on it ("… About: …"); read again, an answer line gives itself."""
    answer: str | None = None
    fields: dict[str, str] = {}
    for line in text.strip().splitlines():
        if not line.strip():
            continue
        label = _LABEL.match(line)
        if label:
            name = label.group(1).lower()
            fields.setdefault(name, line[label.end():].strip()[:MAX_FIELD_CHARS])
        elif answer is None and not fields:
            answer = _LINE_NUMBER.sub("", line).strip()[:MAX_FIELD_CHARS]
    answer = _ANSWER_IS.sub("", answer if answer is not None else fields.get("answer", ""))
    inline = _INLINE_ABOUT.search(answer)
    if inline:
        fields.setdefault("about", answer[inline.end():].strip())
        answer = answer[:inline.start()]
    about = fields.get("about")
    date = fields.get("date")
    status = (fields.get("status") or "").lower()
    return ReplyFields(
        answer=answer.strip().rstrip("."),
        about=None if about is None or about.lower() in _NONE else about,
        date=None if date is None or date.lower().strip(".") in _NONE else date,
        superseded=status.startswith(("superseded", "archived", "withdrawn", "replaced", "obsolete")),
    )


def states_nothing(answer: str) -> bool:
    """Whether the reader said the document does not answer: "not stated" as told, or in a
    sentence of its own ("the artist is not mentioned in the document")."""
    answer = answer.strip().lower().rstrip(".")
    return answer in _NONE or answer.startswith(NOT_STATED) or bool(_SAYS_NOTHING.search(answer))
