"""Statistics shared by the regression gate, the repairs and the controlled verdict: pure
functions of plain numbers (numpy and scipy; no model library)."""

from diagnose.stats.bootstrap import bootstrap_diff_ci, bootstrap_p_value, stratified_bootstrap_diff_ci
from diagnose.stats.rates import bonferroni, proportion_test

__all__ = ["bonferroni", "bootstrap_diff_ci", "bootstrap_p_value", "proportion_test", "stratified_bootstrap_diff_ci"]
