"""Which language a Latin-script text is in, from its function words (for reading its
spelled-out numbers and its own words)."""

from __future__ import annotations

import re




#: A few function words per text2num language, to pick the language of a text.
LANGUAGE_WORDS = {
    "en": set("the and of to is in for with are was that this from by on at".split()),
    "fr": set("le la les des du de est et une un pour dans avec sont au aux sur par qui il elle nous vous ce cette ne pas".split()),
    "es": set("el los las del es y una para con por que se al como más".split()),
    "de": set("der die das und ist mit für ein eine den dem nicht von zu auf im".split()),
    "it": set("il gli della di che è per con non una sono nel alla".split()),
    "pt": set("o os da do das dos e é para com não uma em no na".split()),
    "nl": set("de het een en van is voor met niet op zijn dat".split()),
}
LATIN_WORD = re.compile(r"[^\W\d_]+")


def guess_language(text: str) -> str | None:
    """The text2num language whose function words the text uses most (None without Latin words)."""
    words = [w.lower() for w in LATIN_WORD.findall(text) if w.isascii() or w[0] < "\u0250"]
    if not words:
        return None
    best, score = None, 0
    for lang, stop in LANGUAGE_WORDS.items():
        hits = sum(w in stop for w in words)
        if hits > score:
            best, score = lang, hits
    return best or ""  # "": no function word, let the numbers decide ("quatorze jours")


