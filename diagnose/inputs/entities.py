"""Entity answers: qualifiers in parentheses, names after relation cues, class words.

Part of :mod:`diagnose.inputs.answers` (which calls :func:`entity_candidates`).
"""

from __future__ import annotations

import re

from diagnose.inputs import _lexicon as lex
from diagnose.inputs.answers import Answer, Question, _near, _sentence_score, normalise, sentences

_NAME = r"((?:[A-Z][\w.'’&-]*)(?:\s+(?:[A-Z0-9][\w.'’&-]*|of|the|de|von|van|and|&)){0,4})"


def entity_candidates(q: Question, text: str) -> list[Answer]:
    from diagnose.inputs.roles import role_candidates

    out: list[Answer] = role_candidates(q, text)
    lexicon = lex.CLASS_WORDS.get(q.head or "", ())
    ent = _entity_norm(q).split()
    if ent:
        stem = [re.escape(w[:6]) + r"\w*" if len(w) > 6 else re.escape(w) for w in re.findall(r"\w+", q.entity or "")]
        pat = re.compile(r"\W+".join(stem) + r"\s*\(\s*([^()]{2,60}?)\s*\)", re.IGNORECASE)
        for m in pat.finditer(text):
            qual = _clean_qualifier(m.group(1))
            if qual:
                typed = not lexicon or any(t in normalise(qual).split() or t == normalise(qual) for t in lexicon)
                out.append(Answer(qual, normalise(qual), 3.0 if typed else 0.5, m.start(1)))
    cues = lex.RELATION_CUES.get(q.head or "", ())
    for off, sent in sentences(text):
        base = _sentence_score(q, sent)
        for cue in cues:
            for m in re.finditer(cue + r"\s+(?:(?:[A-Z][a-z]+(?:an|ish|ese|ch)|[a-z][\w-]*)\s+){0,4}" + _NAME, sent):
                name = _trim_name(m.group(1), ent)
                if name:
                    out.append(Answer(name, normalise(name), 2.0 + 0.25 * base, off + m.start(1)))
    named = lex.NAMED.get(q.head or "")
    if named:
        for off, sent in sentences(text):
            base = _sentence_score(q, sent)
            for m in re.finditer(named, sent):
                name = re.sub(r"^(?:(?:the|of)\s+)+", "", m.group(1).strip())
                out.append(Answer(name, normalise(name), 2.0 + 0.25 * base, off + m.start(1)))
    if lexicon:
        low = normalise(text)
        taken: list[tuple[int, int]] = []
        for term in sorted(lexicon, key=lambda t: (-len(t), t)):
            for m in re.finditer(rf"\b{re.escape(term)}\b", low):
                if any(a <= m.start() < b for a, b in taken):
                    continue
                taken.append((m.start(), m.end()))
                near = _near(low, m.start(), ent, 80) if ent else False
                out.append(Answer(term, term, 1.0 + 0.5 * near + 0.1 * term.count(" "), m.start()))
    return out


def _trim_name(name: str, entity_words: list[str]) -> str:
    words = name.split()
    cut = list(words)
    for i, w in enumerate(words):
        if normalise(w) in entity_words and i > 0:
            cut = words[:i]
            break
    while cut and cut[-1].lower() in ("of", "the", "de", "von", "van", "and", "&"):
        cut.pop()
    text = " ".join(cut).strip(" .,'’")
    return "" if not text or normalise(text) in (" ".join(entity_words), "") else text


def _entity_norm(q: Question) -> str:
    return normalise(q.entity) if q.entity else ""


def _clean_qualifier(qual: str) -> str:
    qual = qual.split(",")[0]
    if re.search(r"\d", qual) and not re.fullmatch(r"\s*\d{4}s?\s+[^\d]+|[^\d]+\s+\d{4}s?\s*", qual):
        return ""
    words = re.findall(r"[\w'’.&-]+", qual)
    while words and normalise(words[-1]) in lex.GENERIC_QUALIFIERS:
        words.pop()
    while words and normalise(words[0]) in lex.GENERIC_QUALIFIERS:
        words.pop(0)
    words = [w for w in words if not re.fullmatch(r"\d{4}s?", w)]
    return " ".join(words).strip(" .,-")
