"""The read tier's answers: what the generator said each document answers.

The static answers (:mod:`diagnose.inputs.answers`) are what the text states;
the reading is what the model takes from it, which is what the sampled
outputs will follow. The reading decides where it is usable:

- yes/no: the document's stance is its static vote plus the model's
  yes-minus-no log-probability margin, centred on the model's lean (its
  margin on a document that says nothing, :data:`~diagnose.inputs.reading.NO_INFORMATION`)
  and scaled by ``read_margin_scale``;
- open questions: a typed value in the model's answer, of the class the
  static answers found (or any, when they found none) and stated by the
  document itself, is the document's answer; a free-text answer groups with equal answers (normalised text, or
  embedding cosine at ``read_answer_similarity``) and replaces a static value
  unless the question's grammar asks for a value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from diagnose.inputs.answers import NO, READ_PREFIX, YES, DocAnswer, value_class
from diagnose.inputs.claims import Claim
from diagnose.inputs.settings import InputSettings
from diagnose.text.compare import same_value
from diagnose.text.normalise import normalise_text
from diagnose.text.values import extract_values

if TYPE_CHECKING:
    from diagnose.embedding import Embedder
    from diagnose.inputs.reading import DocumentReading


def read_answers(
    readings: "list[DocumentReading]",
    static: list[DocAnswer | None],
    claims: list[list[Claim]],
    embedder: "Embedder",
    yes_no: bool,
    settings: InputSettings,
    asks_value: bool = True,
    texts: list[str] | None = None,
    lean: float | None = None,
) -> list[DocAnswer | None]:
    """Per document, its answer as read by the model (see the module docstring).

    asks_value: the question's grammar asks for a value ("when", "how many"):
    then a reading without one keeps the document's static value; otherwise a
    free-text reading replaces a static value (which was only a value near the
    question's words). texts: the documents; a value in a reading counts only
    when its document states it too (a small model invents numbers). lean: the
    model's margin on an empty document (``read_margin_bias`` when not measured)."""
    if yes_no:
        centre = settings.read_margin_bias if lean is None else lean
        return [_stance(r, s, c, centre, settings) for r, s, c in zip(readings, static, claims)]
    classes = {value_class(a.value) for a in static if a is not None and a.value is not None}
    out: list[DocAnswer | None] = list(static)
    free: list[int] = []
    for i, r in enumerate(readings):
        values = [v for v in extract_values(r.answer) if not classes or value_class(v) in classes]
        if texts is not None and values:
            stated = extract_values(texts[i])
            values = [v for v in values if any(same_value(v, w) for w in stated)]
        claim = claims[i][0] if claims[i] else None
        if values:
            v = values[0]
            out[i] = DocAnswer(v.key, v.span, claim, v, claim.score if claim else 0.0)
        elif extract_values(r.answer) and asks_value:
            continue  # it answered with a value the document does not state: keep the static answer
        elif normalise_text(r.answer) and (static[i] is None or static[i].value is None or not asks_value):
            free.append(i)
    for i, key in zip(free, _free_text_keys([readings[i].answer for i in free], embedder, settings.read_answer_similarity)):
        claim = claims[i][0] if claims[i] else None
        out[i] = DocAnswer(key, readings[i].answer, claim, None, claim.score if claim else 0.0)
    return out


def _stance(r: "DocumentReading", s: DocAnswer | None, doc: list[Claim], centre: float,
            settings: InputSettings) -> DocAnswer | None:
    if r.yes_margin is None:
        return s
    vote = 0.0 if s is None else (s.strength if s.key == YES else -s.strength)
    lean = (r.yes_margin - centre) / settings.read_margin_scale
    total = vote + lean
    claim = doc[0] if doc else None
    return DocAnswer(YES if total >= 0 else NO, claim.sentence.text if claim else r.answer, claim, None, abs(total))


def _free_text_keys(answers: list[str], embedder: "Embedder", similarity: float) -> list[str]:
    """``read:<k>`` per answer: equal normalised texts, or embeddings at ``similarity``, share k."""
    if not answers:
        return []
    norm = [normalise_text(a) for a in answers]
    emb = embedder.encode(norm)
    label = list(range(len(answers)))
    for i in range(len(answers)):
        for j in range(i):
            if norm[i] == norm[j] or float(np.dot(emb[i], emb[j])) >= similarity:
                label[i] = label[j]
                break
    return [f"{READ_PREFIX}{k}" for k in label]
