"""Text helpers shared by the diagnosis: typed values (:mod:`diagnose.text.values`) and the
one text normaliser of the project (:func:`normalise_text`)."""

from diagnose.text.compare import comparable, same_value
from diagnose.text.normalise import normalise_text
from diagnose.text.value_types import Value
from diagnose.text.values import extract_values

__all__ = ["Value", "comparable", "extract_values", "normalise_text", "same_value"]
