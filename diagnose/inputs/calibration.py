"""The conflict verdict: a calibrated probability and a three-way state.

``input.conflict.probability`` is ``sigmoid(bias + sum of weight x feature)``
over :data:`diagnose.inputs.conflict.FEATURES`. The weights, and the two cut
points that turn the probability into ``input.conflict.state``, are fitted by
``scripts/calibrate-conflict`` (cross-validated over the three dev sets at
once) and shipped in ``conflict_calibration.json`` beside this module:

- ``conflict`` at or above ``conflict_at``: the operating point, chosen so that
  at most 5% of the agreeing dev cases of each set reach it (out-of-fold
  probabilities); the input finding is a ``warn``;
- ``unsure`` at or above ``unsure_at``: evidence of a conflict that the gate
  does not trust; the input finding is ``info``;
- ``none`` below.

A question form (:data:`FORMS`: yes/no or open) with enough agreeing dev cases to measure 5% on
has cut points of its own (``by_form``): a yes/no question's probability rests on the reader's
margins, an open one's on its values, and the two are not equally sure at equal probability.

Light on purpose (json and math only): :mod:`diagnose.inputs.settings` builds
its default from :meth:`ConflictCalibration.shipped`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources
from typing import Literal, Mapping

State = Literal["conflict", "unsure", "none"]
STATES: tuple[State, ...] = ("conflict", "unsure", "none")
SHIPPED = "conflict_calibration.json"
"""The fitted calibration of the static tier, package data of :mod:`diagnose.inputs`."""
READERS = ("static", "reference")
FORMS = ("yes_no", "open")
"""The question forms that may have cut points of their own (``by_form`` in the calibration file)."""


def form_of(yes_no: bool) -> str:
    """The question form (:data:`FORMS`) of a yes/no (``yes_no``) or an open question."""
    return FORMS[0] if yes_no else FORMS[1]


def shipped_file(reader: str) -> str:
    """The package-data file of ``reader``'s calibration (one of :data:`READERS`)."""
    if reader not in READERS:
        raise ValueError(f"no calibration for reader {reader!r}: one of {', '.join(READERS)}")
    return SHIPPED if reader == "static" else f"conflict_calibration_{reader}.json"


def sigmoid(z: float) -> float:
    """The logistic function, without overflow for large ``|z|``."""
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


@dataclass(frozen=True)
class ConflictCalibration:
    weights: tuple[tuple[str, float], ...]
    """(feature, weight) pairs with a ``bias`` entry."""
    conflict_at: float
    """Probability at or above which the state is ``conflict`` (the operating point)."""
    unsure_at: float
    """Probability at or above which the state is at least ``unsure``."""
    by_form: tuple[tuple[str, float, float], ...] = ()
    """(form, conflict_at, unsure_at) of the question forms with cut points of their own."""
    reader_kernels: tuple[str, ...] = ()
    """The reader builds (:func:`diagnose.reader.llama.build_kernels`) whose readings the fit
    read (``fit.reader_kernels``); empty when not recorded."""

    def __post_init__(self) -> None:
        for form, conflict_at, unsure_at in (("", self.conflict_at, self.unsure_at), *self.by_form):
            if form and form not in FORMS:
                raise ValueError(f"calibration by_form: unknown form {form!r}: one of {', '.join(FORMS)}")
            if not 0.0 <= unsure_at <= conflict_at <= 1.0:
                raise ValueError(
                    f"calibration cut points{' of ' + form if form else ''} must satisfy "
                    f"0 <= unsure_at <= conflict_at <= 1, got unsure_at={unsure_at}, conflict_at={conflict_at}"
                )

    @classmethod
    def from_dict(cls, data: Mapping) -> "ConflictCalibration":
        return cls(
            weights=tuple((str(k), float(v)) for k, v in data["weights"].items()),
            conflict_at=float(data["conflict_at"]),
            unsure_at=float(data["unsure_at"]),
            by_form=tuple((str(form), float(cut["conflict_at"]), float(cut["unsure_at"]))
                          for form, cut in data.get("by_form", {}).items()),
            reader_kernels=tuple(str(k) for k in data.get("fit", {}).get("reader_kernels", ())),
        )

    @classmethod
    def shipped(cls, reader: str = "static") -> "ConflictCalibration":
        """The calibration fitted on the dev sets for ``reader``: ``static`` (the text alone,
        ``conflict_calibration.json``) or ``reference`` (``conflict_calibration_reference.json``)."""
        text = resources.files("diagnose.inputs").joinpath(shipped_file(reader)).read_text("utf-8")
        return cls.from_dict(json.loads(text))

    def fitted_on(self, kernels: str | None) -> bool | None:
        """Whether this fit read readings of a reader build with ``kernels``; None when either
        side is not known (a server, or a fit that did not record its builds)."""
        if not kernels or not self.reader_kernels:
            return None
        return kernels in self.reader_kernels

    def probability(self, features: Mapping[str, float]) -> float:
        """``sigmoid(bias + sum of weight x feature)``; features without a weight count 0."""
        table = dict(self.weights)
        return sigmoid(table.get("bias", 0.0) + sum(table.get(name, 0.0) * value for name, value in features.items()))

    def cuts(self, yes_no: bool = False) -> tuple[float, float]:
        """(conflict_at, unsure_at) of a yes/no (``yes_no``) or an open question."""
        form = form_of(yes_no)
        return next(((c, u) for f, c, u in self.by_form if f == form), (self.conflict_at, self.unsure_at))

    def state(self, probability: float, yes_no: bool = False) -> State:
        conflict_at, unsure_at = self.cuts(yes_no)
        if probability >= conflict_at:
            return "conflict"
        return "unsure" if probability >= unsure_at else "none"
