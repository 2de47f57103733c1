"""Triage: the ordered, rule-based checklist that turns stage reports into findings."""

from diagnose.triage.context import DeterminismCheck, Flag, Rule, TriageContext
from diagnose.triage.registry import RULES, triage
from diagnose.triage.thresholds import TriageThresholds

__all__ = ["RULES", "DeterminismCheck", "Flag", "Rule", "TriageContext", "TriageThresholds", "triage"]
