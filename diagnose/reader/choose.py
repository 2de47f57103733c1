"""Which reader reads the documents: ``static``, ``reference``, ``sampled`` or a server URL.

The choice comes, first given wins, from the command line (``--reader``), the case's
``reader:`` field, the setting ``RAG_DIAGNOSE_READER``, else the default: ``reference``
when its weights are installed, else ``static`` with a note saying which checks were not
assessed (:data:`NOT_ASSESSED`).

- ``static``: no model reads; the centers come from the text alone.
- ``reference``: the pinned reader model (:data:`diagnose.reader.weights.REFERENCE`),
  in-process on llama.cpp, apart from the model being diagnosed.
- ``sampled``: the case's own (sampled) model reads each document (the older read tier).
- ``http(s)://…/v1``: an OpenAI-compatible server reads with the reference reader's prompts
  (serve the same GGUF there for the same readings); the model name sent is
  ``RAG_DIAGNOSE_READER_MODEL`` (default ``reader``; a server of one model ignores it).
"""

from __future__ import annotations

from dataclasses import dataclass
from diagnose.case import READER_CHOICES as CHOICES
from diagnose.case import check_reader_choice as check_choice

__all__ = ["CHOICES", "NOT_ASSESSED", "ReaderPlan", "check_choice", "plan"]

NOT_ASSESSED = ("stance", "entity", "standing_from_text")
"""What no model judged when no reader read the documents: yes/no stances, what each
document is about (two things of one name), and a document's own date and status."""


@dataclass(frozen=True)
class ReaderPlan:
    """What reads the documents of one diagnosis."""

    choice: str
    """``static``, ``reference``, ``sampled`` or a URL."""
    defaulted: bool = False
    """The choice was the default (nothing asked for one)."""
    fallback: str | None = None
    """Why the default fell back to ``static`` (the reference reader is not installed), or None."""

    @property
    def reads(self) -> bool:
        return self.choice != "static"


def plan(*asked: str | None, reference_installed: bool) -> ReaderPlan:
    """The first of ``asked`` that is given, else the default (see the module docstring)."""
    for value in asked:
        if value:
            return ReaderPlan(check_choice(value))
    if reference_installed:
        return ReaderPlan("reference", defaulted=True)
    return ReaderPlan("static", defaulted=True,
                      fallback="the reference reader is not installed (`make setup`, or `diagnose reader install`)")
