"""The verdict explains itself: the lines every summary opens with (terminal, HTML, JUnit, Markdown).

First the finding that set the verdict, then whether the sampled model stands in for
the served one, then whether the sampling findings were decided against a control.
"""

from __future__ import annotations

from diagnose.report import Report

__all__ = ["basis_lines"]


def basis_lines(report: Report) -> list[str]:
    basis, sampling = report.basis, report.sampling
    lines = []
    deciding = next((f for f in report.findings if basis is not None and f.rule == basis.deciding), None)
    if deciding is not None:
        lines.append(f"set by {deciding.rule} ({deciding.severity}): {_first_sentence(deciding.advice)}")
    if basis is not None and basis.stand_in:
        lines.append(f"stand-in model: {basis.stand_in}; its own behaviour is reported as info")
    control = sampling.control if sampling is not None else None
    if control is not None:
        lines.append(f"controlled: sampling findings compared with {control.description} "
                     f"(same model, seeds and settings; {control.wall_seconds:.1f}s)")
    elif sampling is not None:
        lines.append("uncontrolled: sampling findings were not compared with a control (run without --no-controls)")
    return lines


def _first_sentence(text: str) -> str:
    head, dot, _ = text.partition(". ")
    return head + "." if dot else text
