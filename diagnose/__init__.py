"""rag-diagnose: find the competing gravity centers in a RAG prompt and measure the wobble.

Public Python API (contract section 5)::

    from diagnose import Case, diagnose_inputs, diagnose_case
"""

from __future__ import annotations

from diagnose._lazy import lazy_attributes
from diagnose.case import Case, Document, SamplingSpec, case_from_dict
from diagnose.errors import CaseError, DiagnoseError, ModelError
from diagnose.report import Report

__all__ = [
    "Case",
    "CaseError",
    "DiagnoseError",
    "Diagnoser",
    "Document",
    "ModelError",
    "Report",
    "SamplingSpec",
    "Settings",
    "case_from_dict",
    "diagnose_case",
    "diagnose_inputs",
    "load_case",
]

_LAZY = {
    "diagnose_inputs": "diagnose.pipeline",
    "diagnose_case": "diagnose.pipeline",
    "Diagnoser": "diagnose.pipeline",
    "Settings": "diagnose.settings",
    "load_case": "diagnose.case_file",
}


# The pipeline pulls in torch; load it only when asked for.
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)
