"""The case: one RAG call to diagnose (contract section 1).

Boundary types are msgspec Structs whose field names are the contract's keys.
``load_case`` reads a YAML or JSON file; ``case_from_dict`` converts plain data;
both raise :class:`CaseError` naming the offending field and value.
"""

from __future__ import annotations

import math
import re
from typing import Any, Union
from urllib.parse import urlsplit

import msgspec
import msgspec.inspect

from diagnose.document import to_documents
from diagnose.document import Document
from diagnose.errors import CaseError

#: Largest number of samples per temperature a case may ask for.
MAX_SEEDS = 256
#: Largest number of temperatures in one case.
MAX_TEMPERATURES = 8
#: Temperatures are accepted in [0, MAX_TEMPERATURE]; at or below GREEDY_EPSILON means greedy.
MAX_TEMPERATURE = 2.0
#: A temperature at or below this value means greedy decoding (argmax).
GREEDY_EPSILON = 1e-5
#: Largest generation budget per sample.
MAX_NEW_TOKENS = 4096
#: Largest repetition penalty; values above ~2 destroy fluency already.
MAX_REPETITION_PENALTY = 10.0
#: Deepest nesting of lists and mappings accepted in case data (a valid case needs 4; a library push 6).
MAX_NESTING = 32

#: Matched with ``fullmatch``: ``match`` lets ``$`` pass before a trailing newline ("abc\n").
#: The anchors stay for the OpenAPI document, where the pattern is an ECMA regex searched anywhere.
_ID_PATTERN = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


class SamplingSpec(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """How the prompt is sampled. A value that turns a step off is named per field."""

    seeds: int = 8
    """Samples per temperature (1..MAX_SEEDS). Sample ``i`` uses seed ``i``."""
    temperatures: list[float] = msgspec.field(default_factory=lambda: [0.2, 0.7, 1.2])
    """Each temperature is one run; 0 means greedy decoding."""
    top_p: float = 0.9
    """Nucleus mass in (0, 1]; 1.0 turns top-p off."""
    top_k: int = 50
    """Keep the k most likely tokens; 0 turns top-k off."""
    repetition_penalty: float = 1.0
    """HF-style penalty on every token already in prompt or output; 1.0 is off."""
    max_new_tokens: int = 128
    """Generation budget per sample; reaching it means ``finish_reason == "length"``."""


class JsonConstraint(msgspec.Struct, tag="json", tag_field="type", forbid_unknown_fields=True):
    """The output must parse as JSON (optionally an object holding ``keys``)."""

    keys: list[str] = []


class RegexConstraint(msgspec.Struct, tag="regex", tag_field="type", forbid_unknown_fields=True):
    """The output must contain a match of ``pattern`` (Python ``re.search``)."""

    pattern: str


class MaxWordsConstraint(msgspec.Struct, tag="max_words", tag_field="type", forbid_unknown_fields=True):
    """The output must have at most ``max`` whitespace-separated words."""

    max: int


class MustIncludeConstraint(
    msgspec.Struct, tag="must_include", tag_field="type", forbid_unknown_fields=True
):
    """The output must contain ``text`` (case-insensitive)."""

    text: str


Constraint = Union[JsonConstraint, RegexConstraint, MaxWordsConstraint, MustIncludeConstraint]
CONSTRAINT_TYPES = ("json", "regex", "max_words", "must_include")


class Case(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One RAG call: a question plus the retrieved documents, and how to sample it.

    ``documents`` also accepts LangChain ``Document`` objects (anything with
    ``page_content`` and ``metadata``); they are converted on construction.
    """

    id: str
    question: str
    documents: list[Document] = []
    system: str | None = None
    template: str | None = None
    """Prompt template with ``{question}`` and ``{documents}`` placeholders."""
    document_format: str | None = None
    """Extension: how each document is written into ``{documents}``, with the
    placeholders ``{index}`` (1-based), ``{id}``, ``{source}`` and ``{text}``.
    Default: ``Document [{index}] (id: {id})`` on one line, the text below."""
    document_separator: str | None = None
    """Extension: what goes between documents; default a blank line (``"\n\n"``)."""
    sampling: SamplingSpec = msgspec.field(default_factory=SamplingSpec)
    constraints: list[Constraint] = []
    model: str = "default"
    """``default`` (the embedded model), a Hugging Face model directory or a GGUF file."""
    stand_in: bool | None = None
    """Extension: whether ``model`` stands in for the model the prompt is served with (its own
    behaviour is then reported as ``info``). None: the embedded default is a stand-in, any other
    model is the user's own."""
    tags: list[str] = []
    """Extension: labels to select subsets of a prompt library (``nightly --tag``)."""
    reader: str | None = None
    """Contract §8: who reads the documents (``static``, ``reference``, ``sampled`` or an
    OpenAI-compatible server's URL); None: the command line's, the setting's, else the default
    (:mod:`diagnose.reader.choose`)."""

    def __post_init__(self) -> None:
        if any(not isinstance(d, Document) for d in self.documents):
            self.documents = to_documents(self.documents)
        validate_case(self)


READER_CHOICES = ("static", "reference", "sampled")
"""Who reads the documents, besides the URL of an OpenAI-compatible server (:mod:`diagnose.reader.choose`)."""


def check_reader_choice(value: Any, field: str = "reader") -> str:
    """``value`` if it names a reader, else :class:`CaseError` naming ``field`` and the choices."""
    if isinstance(value, str) and (value.strip() in READER_CHOICES or _is_http_url(value)):
        return value.strip()
    raise CaseError(field, f"must be one of {', '.join(READER_CHOICES)} or an http(s) URL of an "
                           "OpenAI-compatible server", value)


def _is_http_url(value: str) -> bool:
    parts = urlsplit(value.strip())
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def validate_case(case: Case) -> None:
    """Check what the types alone cannot; raise CaseError naming the field."""
    _check_finite_numbers(case)
    if not _ID_PATTERN.fullmatch(case.id):
        raise CaseError("id", "must match [A-Za-z0-9._-]{1,128}", case.id)
    if not case.question.strip():
        raise CaseError("question", "must not be empty", case.question)
    _check_utf8("question", case.question)
    for name in ("system", "template"):
        value = getattr(case, name)
        if value is not None:
            _check_utf8(name, value)
    if case.template is not None:
        for slot in ("{question}", "{documents}"):
            if slot not in case.template:
                raise CaseError("template", f"must contain the placeholder {slot}", case.template)
    if case.document_format is not None and "{text}" not in case.document_format:
        raise CaseError("document_format", "must contain the placeholder {text}", case.document_format)
    seen: dict[str, int] = {}
    for i, doc in enumerate(case.documents):
        if not doc.id.strip():
            raise CaseError(f"documents[{i}].id", "must not be empty", doc.id)
        if doc.id in seen:
            raise CaseError(
                f"documents[{i}].id", f"duplicates documents[{seen[doc.id]}].id", doc.id
            )
        seen[doc.id] = i
        _check_utf8(f"documents[{i}].text", doc.text)
    if case.reader is not None:
        check_reader_choice(case.reader, "reader")
    _validate_sampling(case.sampling)
    for i, constraint in enumerate(case.constraints):
        _validate_constraint(f"constraints[{i}]", constraint)


def _validate_sampling(s: SamplingSpec) -> None:
    if not 1 <= s.seeds <= MAX_SEEDS:
        raise CaseError("sampling.seeds", f"must be between 1 and {MAX_SEEDS}", s.seeds)
    if not 1 <= len(s.temperatures) <= MAX_TEMPERATURES:
        raise CaseError(
            "sampling.temperatures", f"must list 1 to {MAX_TEMPERATURES} values", s.temperatures
        )
    for i, t in enumerate(s.temperatures):
        if not 0.0 <= t <= MAX_TEMPERATURE:
            raise CaseError(f"sampling.temperatures[{i}]", f"must be in [0, {MAX_TEMPERATURE}]", t)
    if len(set(s.temperatures)) != len(s.temperatures):
        raise CaseError("sampling.temperatures", "must not repeat a value", s.temperatures)
    if not 0.0 < s.top_p <= 1.0:
        raise CaseError("sampling.top_p", "must be in (0, 1]; 1.0 turns top-p off", s.top_p)
    if s.top_k < 0:
        raise CaseError("sampling.top_k", "must be >= 0; 0 turns top-k off", s.top_k)
    if not 0.0 < s.repetition_penalty <= MAX_REPETITION_PENALTY:
        raise CaseError(
            "sampling.repetition_penalty",
            f"must be in (0, {MAX_REPETITION_PENALTY}]; 1.0 turns it off",
            s.repetition_penalty,
        )
    if not 1 <= s.max_new_tokens <= MAX_NEW_TOKENS:
        raise CaseError(
            "sampling.max_new_tokens", f"must be between 1 and {MAX_NEW_TOKENS}", s.max_new_tokens
        )


def _validate_constraint(path: str, c: Constraint) -> None:
    if isinstance(c, RegexConstraint):
        # Compiled as the samples are checked: valid for re and the regex module, small enough.
        from diagnose.text.patterns import PatternError, compile_pattern

        try:
            compile_pattern(c.pattern)
        except PatternError as exc:  # a{99999999999}, 1000 nested groups, ((a{1000}){1000}){1000}
            raise CaseError(f"{path}.pattern", f"is not a valid regular expression: {exc}", c.pattern)
    elif isinstance(c, MaxWordsConstraint) and c.max < 1:
        raise CaseError(f"{path}.max", "must be >= 1", c.max)
    elif isinstance(c, MustIncludeConstraint) and not c.text:
        raise CaseError(f"{path}.text", "must not be empty", c.text)


def _check_finite_numbers(case: Case) -> None:
    """Every float anywhere in the case (scores, temperatures, top_p, ...) must be finite.

    NaN and infinities are no JSON numbers: PostgreSQL's jsonb refuses them, SQLite
    stores non-standard JSON, and no range check catches a NaN score. Walking the
    structs, rather than naming fields, covers float fields added later too.
    """
    pending: list[tuple[str, Any]] = [("", case)]
    while pending:
        path, value = pending.pop()
        if isinstance(value, float):
            if not math.isfinite(value):
                raise CaseError(path, "must be a finite number", value)
        elif isinstance(value, msgspec.Struct):
            names = value.__struct_fields__
            pending.extend((f"{path}.{n}" if path else n, getattr(value, n)) for n in reversed(names))
        elif isinstance(value, (list, tuple)):
            pending.extend((f"{path}[{i}]", value[i]) for i in reversed(range(len(value))))


def _check_utf8(path: str, text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CaseError(path, f"is not valid UTF-8 text at character {exc.start}", text[:40])


def case_from_dict(data: Any) -> Case:
    """Convert plain data (parsed YAML/JSON) into a validated Case."""
    if not isinstance(data, dict):
        raise CaseError("$", "a case must be a mapping of fields", type(data).__name__)
    check_nesting(data)
    try:
        return msgspec.convert(data, Case, strict=False)
    except msgspec.ValidationError as exc:
        raise _case_error_from_msgspec(exc, data) from None


def check_nesting(data: Any, path: str = "$", limit: int = MAX_NESTING) -> None:
    """Refuse lists and mappings nested deeper than ``limit`` (without recursing).

    No valid case comes close; the check keeps a hostile one from reaching code
    that recurses over values (``repr`` of an error's value, JSON encoders).
    """
    pending: list[tuple[Any, int]] = [(data, 0)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict):
            value = list(value.values())
        elif not isinstance(value, (list, tuple)):
            continue
        if depth >= limit:
            raise CaseError(path, f"is nested more than {limit} levels deep")
        pending.extend((item, depth + 1) for item in value)


# msgspec messages look like "Expected `int`, got `str` - at `$.sampling.seeds`".
_AT = re.compile(r"^(?P<msg>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_UNKNOWN = re.compile(r"Object contains unknown field `(?P<name>[^`]+)`")
_MISSING = re.compile(r"Object missing required field `(?P<name>[^`]+)`")
_BAD_TAG = re.compile(r"Invalid value '(?P<value>[^']*)'")
_BAD_ENUM = re.compile(r"Invalid enum value (?P<value>.*)$", re.S)
_BAD_TIME = re.compile(r"Invalid RFC3339 encoded (?P<kind>date|datetime|time)")
_TIME_FORMS = {"date": "YYYY-MM-DD, e.g. 2011-03-01", "datetime": "e.g. 2011-03-01T09:30:00Z", "time": "e.g. 09:30:00"}


def _case_error_from_msgspec(exc: msgspec.ValidationError, data: Any) -> CaseError:
    match = _AT.match(str(exc))
    message = match.group("msg") if match else str(exc)
    path = (match.group("path") or "") if match else ""
    path = path.lstrip(".")
    for pattern in (_UNKNOWN, _MISSING):
        named = pattern.search(message)
        if named:
            field = f"{path}.{named.group('name')}" if path else named.group("name")
            reason = "is not a known field" if pattern is _UNKNOWN else "is required"
            return CaseError(field, reason)
    bad_tag = _BAD_TAG.search(message)
    if bad_tag and path.endswith(".type") and path.startswith("constraints"):
        return CaseError(
            path,
            f"unknown constraint type; known types: {', '.join(CONSTRAINT_TYPES)}",
            bad_tag.group("value"),
        )
    if _BAD_ENUM.search(message):
        allowed = _allowed_values(path)
        if allowed:
            return CaseError(path, f"must be one of {', '.join(map(str, allowed))}", _lookup(data, path))
    bad_time = _BAD_TIME.search(message)
    if bad_time:  # msgspec names RFC 3339; the docs and the date readers say ISO 8601 (RFC 3339 is a profile of it)
        kind = bad_time.group("kind")
        return CaseError(path, f"is not an ISO 8601 {kind} ({_TIME_FORMS[kind]})", _lookup(data, path))
    return CaseError(path or "$", message, _lookup(data, path))


def _allowed_values(path: str) -> tuple[Any, ...]:
    """The values a literal field at a msgspec path like ``documents[1].authority`` allows (empty
    when the path does not lead to one)."""
    info: Any = msgspec.inspect.type_info(Case)
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        info = _not_none(info)
        if part.startswith("["):
            info = getattr(info, "item_type", None)
        else:
            info = {f.name: f.type for f in getattr(info, "fields", ())}.get(part)
    info = _not_none(info)
    return tuple(info.values) if isinstance(info, msgspec.inspect.LiteralType) else ()


def _not_none(info: Any) -> Any:
    """An optional type's type (``X | None`` → ``X``)."""
    while isinstance(info, msgspec.inspect.UnionType):
        info = next((t for t in info.types if not isinstance(t, msgspec.inspect.NoneType)), None)
    return info


def _lookup(data: Any, path: str) -> Any:
    """Best-effort value at a msgspec path like ``documents[1].id``."""
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        try:
            data = data[int(part[1:-1])] if part.startswith("[") else data[part]
        except (KeyError, IndexError, TypeError, ValueError):
            return None
    return data

