"""The checklist: every rule, in order, and the function that runs them.

Findings come out ordered by stage (input → sampling → length → environment →
framework), keeping this list's order within a stage.
"""

from __future__ import annotations

from diagnose.report import STAGE_ORDER, Finding
from diagnose.triage import environment_rules, framework_rules, input_rules, length_rules
from diagnose.triage import sampling_rules
from diagnose.triage.context import Rule, TriageContext

RULES: tuple[Rule, ...] = (
    Rule("input.competing_centers", "input", input_rules.competing_centers),
    Rule("input.noise_share", "input", input_rules.noise_share),
    Rule("input.contradictory_instructions", "input", input_rules.contradictory_instructions),
    Rule("input.unclear_delimiters", "input", input_rules.unclear_delimiters),
    Rule("input.lost_in_the_middle", "input", input_rules.lost_in_the_middle),
    Rule("input.reader_unavailable", "input", input_rules.reader_unavailable),
    Rule("input.reader_build", "input", input_rules.reader_build),
    Rule("sampling.split_center_pull", "sampling", sampling_rules.split_center_pull),
    Rule("sampling.weak_pull", "sampling", sampling_rules.weak_pull),
    Rule("sampling.strong_pull", "sampling", sampling_rules.strong_pull),
    Rule("sampling.determinism_trap", "sampling", sampling_rules.determinism_trap),
    Rule("sampling.truncation_settings", "sampling", sampling_rules.truncation_settings),
    Rule("sampling.repetition_penalty_high", "sampling", sampling_rules.repetition_penalty_high),
    Rule("sampling.context_pull", "sampling", sampling_rules.context_pull),
    Rule("sampling.constraint_timeout", "sampling", sampling_rules.constraint_timeout),
    Rule("sampling.answers_elsewhere", "sampling", sampling_rules.answers_elsewhere),
    Rule("length.truncated", "length", length_rules.truncated),
    Rule("length.context_window", "length", length_rules.context_window),
    Rule("environment.nondeterministic", "environment", environment_rules.nondeterministic),
    Rule("environment.quantized_model", "environment", environment_rules.quantized_model),
    Rule("environment.fingerprint_changed", "environment", environment_rules.fingerprint_changed),
    Rule("framework.sampler_portability", "framework", framework_rules.sampler_portability),
)


def triage(context: TriageContext, rules: tuple[Rule, ...] = RULES) -> list[Finding]:
    findings = [f for rule in rules if (f := rule.apply(context)) is not None]
    return sorted(findings, key=lambda f: STAGE_ORDER.index(f.stage))
