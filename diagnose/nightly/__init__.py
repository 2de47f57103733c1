"""Nightly regression runs over a prompt library: compare each case with its baseline.

The pieces: :func:`library.discover` finds the cases, :func:`runner.run_library`
diagnoses them into a stored, resumable run (``RUNS/<run_id>/``),
:func:`compare_runs` compares each case with the baseline run's report
(``compare.compare_reports``), and ``junit``/``markdown`` render the result.
:func:`run_nightly` does all of it for ``diagnose nightly``.

Runs are files here; database storage and queue fan-out come with the REST service.
"""

from diagnose.nightly.library import LibraryCase, discover
from diagnose.nightly.regression import (
    GATE_FAILED_EXIT, FailOn, NightlyResult, compare_runs, find_runs,
    resolve_baseline, run_nightly,
)
from diagnose.nightly.runner import CaseRecord, DiagnoseFactory, DiagnoseFn, RunRecord, load_run, run_library

__all__ = [
    "CaseRecord", "DiagnoseFactory", "DiagnoseFn", "FailOn", "GATE_FAILED_EXIT", "LibraryCase",
    "NightlyResult", "RunRecord", "compare_runs", "discover",
    "find_runs", "load_run", "resolve_baseline", "run_library", "run_nightly",
]
