"""Text helpers shared by the diagnosis: typed values (:mod:`diagnose.text.values`) and the
one text normaliser of the project (:func:`normalise_text`)."""

from diagnose.text.normalise import normalise_text
from diagnose.text.values import Value, comparable, extract_values, same_value

__all__ = ["Value", "comparable", "extract_values", "normalise_text", "same_value"]
