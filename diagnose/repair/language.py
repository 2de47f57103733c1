"""The case's language, from the question's script and function words, for the one sentence
a repair writes into the prompt (the disagreement instruction).

Generic facts only: kana means Japanese, Han characters without kana Chinese, and a
Latin-script question is French or English by the share of each language's function
words (:func:`diagnose.text.language.guess_language`, the same guess the value reader
uses). Any other language gets the English sentence.
"""

from __future__ import annotations

from diagnose.text.language import guess_language
from diagnose.text.sentences import HAN, KANA

DISAGREEMENT_INSTRUCTION: dict[str, str] = {
    "en": "If the documents disagree, say so and give each answer with its source.",
    "fr": "Si les documents se contredisent, dites-le et donnez chaque réponse avec sa source.",
    "zh": "如果文档之间存在分歧，请指出这一点，并给出每个答案及其来源。",
    "ja": "文書の内容が食い違う場合は、そのことを述べ、それぞれの答えを出典とともに示してください。",
}
"""The instruction ``disagreement_instruction`` repairs add, per language (English fallback)."""


def question_language(question: str) -> str:
    """``ja``, ``zh``, ``fr`` or ``en`` (the fallback for every other language)."""
    if KANA.search(question):
        return "ja"
    if HAN.search(question):
        return "zh"
    return "fr" if guess_language(question) == "fr" else "en"


def disagreement_instruction(question: str) -> str:
    """The disagreement instruction in the question's language."""
    return DISAGREEMENT_INSTRUCTION[question_language(question)]
