"""The built-in benchmark prompt: a RAG prompt of about 3,000 tokens with one planted conflict."""

from __future__ import annotations

from diagnose.case import Case, Document

_PASSAGES = (
    "The Golden Gate Bridge is a suspension bridge spanning the Golden Gate strait, the "
    "one-mile-wide channel between San Francisco Bay and the Pacific Ocean. It was opened to "
    "traffic in {year} and was then the longest suspension bridge main span in the world.",
    "Construction of the bridge began in January 1933 under chief engineer Joseph Strauss. "
    "The total cost was about 35 million dollars, and eleven workers died during construction.",
    "The bridge's color, officially called international orange, was chosen by consulting "
    "architect Irving Morrow because it complements the natural surroundings and is visible in fog.",
    "The main cables are 36.5 inches in diameter and contain 27,572 strands of wire. The towers "
    "rise 746 feet above the water and the total length of the bridge is 8,981 feet.",
)


def builtin_case(documents: int = 52) -> Case:
    """A RAG prompt of ``documents`` passages (about 58 tokens each; 52 give ~3,000 tokens).

    One passage in eight says the bridge opened in 1937, the others 1952: a conflict.
    """
    docs = [
        Document(id=f"d{i + 1}", text=_PASSAGES[i % len(_PASSAGES)].format(year=1937 if i % 8 == 0 else 1952))
        for i in range(documents)
    ]
    return Case(id="bench-sampling", question="When was the Golden Gate Bridge opened?", documents=docs)
