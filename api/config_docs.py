"""``docs/configuration.md``, written from the settings classes themselves, so the manual
cannot drift from the code: ``python -m api.config_docs > docs/configuration.md``
(``tests/test_docs.py`` fails when the file is stale).

Each variable's default is the dataclass field's default and its meaning the field's
docstring (the string literal under it, read with :mod:`ast`)."""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import MISSING, fields
from typing import Any

from api.settings import AuthSettings, DatabaseTimeouts, Limits, QueueSettings
from diagnose.settings import MODEL_VARIABLES, OPENAI_API_KEY_VARIABLE, DatabaseSettings, ModelSettings

HEADER = """# Configuration

Everything is read from the environment once, at start-up (`diagnose` commands and
`diagnose serve`, its workers included). A variable that is set but malformed is a usage
error (exit 2, or a service that refuses to start) naming it and the form it expects, e.g.
`usage: RAG_DIAGNOSE_THREADS: expected a whole number of threads, 0 or more (0: torch's own
choice) (got 'abc')`.

This page is generated from the settings classes (`diagnose/settings.py`,
`api/settings.py`): `python -m api.config_docs > docs/configuration.md`.
"""

SERVICE_GROUPS = (
    (Limits, "Request limits"),
    (QueueSettings, "Queue and admission"),
    (AuthSettings, "Keys, sign-in and connections"),
    (DatabaseTimeouts, "Database timeouts"),
)


def attribute_docs(cls: type) -> dict[str, str]:
    """Each field's docstring: the string statement right under its annotated assignment."""
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body
    docs = {}
    for statement, following in zip(body, body[1:]):
        if (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)):
            docs[statement.target.id] = " ".join(inspect.cleandoc(following.value.value).split())
    return docs


def _default(cls: type, name: str) -> Any:
    field = next(f for f in fields(cls) if f.name == name)
    return field.default if field.default is not MISSING else None


def _shown(value: Any) -> str:
    if value is None or value == "":
        return "empty"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("``", "`")


def _table(rows: list[tuple[str, str, str]]) -> list[str]:
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    lines += [f"| `{variable}` | {default} | {_cell(meaning)} |" for variable, default, meaning in rows]
    return lines


def engine_rows() -> list[tuple[str, str, str]]:
    docs = attribute_docs(ModelSettings)
    defaults = {"cache_dir": "`$XDG_CACHE_HOME/rag-diagnose` (`~/.cache/rag-diagnose`)"}
    rows = [(variable, defaults.get(name) or _shown(_default(ModelSettings, name)),
             f"{docs.get(name, '')} Accepted: {expected}.".strip())
            for name, variable, _parse, expected in MODEL_VARIABLES]
    rows.append(("DATABASE_URL", _shown(DatabaseSettings.url), attribute_docs(DatabaseSettings)["url"]))
    rows.append((OPENAI_API_KEY_VARIABLE, "empty",
                 "The bearer key `--server` sends to an OpenAI-compatible server (never stored in a report)."))
    return rows


def service_rows(cls: type) -> list[tuple[str, str, str]]:
    docs = attribute_docs(cls)
    return [(f"RAG_DIAGNOSE_{f.name.upper()}", _shown(f.default), docs.get(f.name, ""))
            for f in fields(cls)]


def render() -> str:
    lines = [HEADER, "## The engine (every command)", ""] + _table(engine_rows())
    lines += ["", "## The service (`diagnose serve` and its workers)", ""]
    for cls, title in SERVICE_GROUPS:
        lines += [f"### {title}", ""] + _table(service_rows(cls)) + [""]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
