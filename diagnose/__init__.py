"""rag-diagnose: find the competing gravity centers in a RAG prompt and measure the wobble.

Public Python API (contract section 5)::

    from diagnose import Case, diagnose_inputs, diagnose_case
"""

from __future__ import annotations

from typing import Any

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


def __getattr__(name: str) -> Any:
    # The pipeline pulls in torch; load it only when asked for.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'diagnose' has no attribute {name!r}")
