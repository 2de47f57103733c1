"""``run --repair``: candidate changes drawn from the findings, re-sampled and verified.

:func:`run_repairs` does it all; :func:`propose` lists the candidates alone.
"""

from diagnose.repair.candidates import Candidate, propose
from diagnose.repair.runner import BUDGET_FACTOR, RepairOutcome, default_budget, run_repairs
from diagnose.repair.verdict import verdict

__all__ = ["BUDGET_FACTOR", "Candidate", "RepairOutcome", "default_budget", "propose", "run_repairs", "verdict"]
