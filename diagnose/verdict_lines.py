"""The verdict explains itself: the lines every summary opens with (terminal, HTML, JUnit, Markdown).

First the finding that set the verdict, then whether the sampled model stands in for
the served one, then whether the sampling findings were decided against a control.
Reads the report as its JSON dict (``Report.to_dict``), as the nightly summaries hold it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["basis_lines"]


def basis_lines(report: dict[str, Any]) -> list[str]:
    basis = report.get("basis") or {}
    findings = report.get("findings") or []
    lines = []
    deciding = next((f for f in findings if f.get("rule") == basis.get("deciding")), None)
    if deciding is not None:
        lines.append(f"set by {deciding['rule']} ({deciding['severity']}): {_first_sentence(deciding.get('advice', ''))}")
    if basis.get("stand_in"):
        lines.append(f"stand-in model: {basis['stand_in']}; its own behaviour is reported as info")
    sampling = report.get("sampling")
    control = (sampling or {}).get("control")
    if control:
        lines.append(f"controlled: sampling findings compared with {control['description']} "
                     f"(same model, seeds and settings; {control.get('wall_seconds', 0):.1f}s)")
    elif sampling:
        lines.append("uncontrolled: sampling findings were not compared with a control (run without --no-controls)")
    return lines


def _first_sentence(text: str) -> str:
    head, dot, _ = text.partition(". ")
    return head + "." if dot else text
