"""Run the ``diagnose`` command line in-process, as its entry point does, for its exit code."""

from __future__ import annotations

from diagnose.cli import _run, cli


def invoke(args: list[str]) -> int:
    """The exit code of ``diagnose ARGS`` (errors handled as ``main`` handles them)."""
    return _run(lambda: cli.main(args=args, prog_name="diagnose", standalone_mode=False), False)
