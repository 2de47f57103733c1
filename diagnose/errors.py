"""Typed errors of the engine.

The tree::

    DiagnoseError                 exit 1 (internal failure)
    ├── CaseError                 exit 2, HTTP 422: an invalid case; names the field path
    │   └── PromptTooLarge        exit 2, HTTP 413: the assembled prompt is over the size bound
    ├── UsageError                exit 2: bad command-line usage (unknown model name, bad path)
    │   └── SettingError          exit 2: a malformed environment variable; names it and its form
    ├── ModelError                exit 1, HTTP 500: a model could not be loaded or run
    └── BackendError              exit 1, HTTP 500: a sampling backend failed

The CLI maps ``exit_code`` to the process exit status (and returns
:data:`EXIT_GATE`, 3, itself when a verdict or gate reaches ``--fail-on``); the API maps the same
classes to HTTP in one table (``api.problems.ENGINE_PROBLEMS``). Nothing below the CLI calls ``sys.exit``.
"""

from __future__ import annotations

from typing import Any

#: Process exit statuses of the CLI (contract section 2).
EXIT_OK = 0
"""The command ran (whatever the verdict, unless ``--fail-on`` says otherwise)."""
EXIT_INTERNAL = 1
"""An internal failure (a bug, a model that would not load, a backend that failed)."""
EXIT_USAGE = 2
"""Bad usage (an option, an environment variable) or an invalid case; the message names it."""
EXIT_GATE = 3
"""The verdict (``run``, ``inputs``) or the regression gate (``nightly``) reached ``--fail-on``."""


class DiagnoseError(Exception):
    """Base of every error the engine raises on purpose."""

    exit_code: int = EXIT_INTERNAL


class CaseError(DiagnoseError):
    """A case (or a setting given with it) is invalid.

    ``field`` is the dotted path of the offending field, e.g. ``sampling.top_p``
    or ``documents[2].id``; ``value`` is what was given.
    """

    exit_code = EXIT_USAGE

    def __init__(self, field: str, message: str, value: Any = None) -> None:
        self.field = field
        self.value = value
        self.reason = message
        shown = "" if value is None else f" (got {_short(value)})"
        super().__init__(f"{field}: {message}{shown}")


class PromptTooLarge(CaseError):
    """The assembled prompt would exceed a size bound; ``field`` names the part to blame."""


class UsageError(DiagnoseError):
    """The command was asked for something that cannot work (unknown model, missing file)."""

    exit_code = EXIT_USAGE


class SettingError(UsageError):
    """An environment variable is set to something :class:`diagnose.settings.Settings` cannot use.

    ``variable`` is its name, ``expected`` the form it takes, ``value`` what was given.
    """

    def __init__(self, variable: str, expected: str, value: str) -> None:
        self.variable = variable
        self.expected = expected
        self.value = value
        super().__init__(f"{variable}: expected {expected} (got {_short(value)})")


class ModelError(DiagnoseError):
    """A model could not be located, loaded or run."""


class BackendError(DiagnoseError):
    """A sampling backend failed while generating."""


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
