"""The JSON bodies the service answers, as msgspec structs, so the OpenAPI document says what comes back.

The services build them (:mod:`api.services.diagnoses`, ``library``, ``nightly``; ``/healthz`` its handler) and the
controllers return them as they are. Members an answer may leave out are
:data:`msgspec.UNSET` by default and are left out when encoded: absent stays absent,
``null`` stays ``null``. A member a struct does not declare is refused when a service builds
it (the constructor's keywords), and when an answer is decoded (``forbid_unknown_fields``).

The report itself (contract section 3) stays a free-form mapping inside its envelope.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from diagnose.report import Verdict

Timestamp = Annotated[str, Meta(description="UTC, ISO 8601.")]


class _Body(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    pass


# -- /v1/diagnoses --------------------------------------------------------------------------------
class DiagnosisLinks(_Body):
    self: str
    report: str
    report_html: str
    page: str


class DiagnosisView(_Body):
    """Contract section 4: `{id, status, report?, error?}`, with the request, progress and links."""

    id: str
    status: Literal["queued", "running", "done", "failed", "cancelled"]
    mode: Literal["inputs", "run", "repair"]
    case_id: str
    verdict: Verdict | None
    attempts: int
    created_at: Timestamp | None
    started_at: Timestamp | None
    finished_at: Timestamp | None
    links: DiagnosisLinks
    progress: Annotated[dict[str, Any] | UnsetType,
        Meta(description="While running: the worker's phase and step.")] = UNSET
    cancel_requested: Annotated[bool | UnsetType,
        Meta(description='`true` while a running diagnosis has been asked to stop.')] = UNSET
    report: Annotated[dict[str, Any] | UnsetType,
        Meta(description='The report (contract section 3), once done; left out of lists.')] = UNSET
    error: Annotated[dict[str, Any] | UnsetType, Meta(description='Why it failed.')] = UNSET


class SubmittedDiagnosis(DiagnosisView, kw_only=True, forbid_unknown_fields=True):
    """The answer to a submission: the diagnosis, and whether a stored identical request answered it."""

    reused: bool


# -- /v1/library ----------------------------------------------------------------------------------
class PushedCase(_Body):
    case_id: str
    content_hash: str
    tags: list[str]
    version: Annotated[int, Meta(description='1-based position of the stored version now current.')]
    status: Literal["added", "updated", "unchanged", "retagged", "restored"]


class LibraryPushResult(_Body):
    counts: Annotated[dict[str, int], Meta(description='How many cases got each `status`.')]
    cases: list[PushedCase]


class LatestResult(_Body):
    verdict: Verdict | None
    run_id: str
    diagnosis_id: str
    finished_at: Timestamp | None


class LibraryEntry(_Body):
    case_id: str
    content_hash: str
    tags: list[str]
    versions: int
    created_at: Timestamp | None
    latest: Annotated[LatestResult | None,
        Meta(description="The case's verdict in the latest done nightly run that diagnosed it.")]


# -- /v1/nightly-runs -----------------------------------------------------------------------------
class RunProgress(_Body):
    finished: int
    total: int


class RunLinks(_Body):
    self: str
    junit: str
    summary_md: str
    baseline: str | UnsetType = UNSET


class NightlyRunView(_Body):
    """`{id, status, progress: {finished, total}, gate?, counts?, summary?, links, ...}`."""

    id: str
    status: Literal["running", "done", "failed"]
    tags: list[str]
    fail_on: Literal["warn", "fail", "never"]
    seed_offset: int | None
    baseline_id: str | None
    created_at: Timestamp | None
    finished_at: Timestamp | None
    progress: RunProgress
    links: RunLinks
    gate: Annotated[str | None | UnsetType, Meta(description='Once done: `pass`, `warn` or `fail`.')] = UNSET
    counts: dict[str, int] | None | UnsetType = UNSET
    summary: Annotated[dict[str, Any] | UnsetType,
        Meta(description='Once done: per-case comparisons with their evidence; left out of lists.')] = UNSET


# -- /healthz -------------------------------------------------------------------------------------
class Health(_Body):
    status: Literal["ok"]
    queue: Annotated[str, Meta(description='The job transport: `sqlite` or `postgresql`.')]
    capacity: int
    pending: int
    workers: int
    last_heartbeat_age_s: Annotated[float | None | UnsetType, Meta(
        description='PostgreSQL: seconds since the last worker heartbeat (null: none ever).')] = UNSET
    worker: Annotated[Literal["disabled"] | UnsetType,
        Meta(description='`disabled` when this SQLite service runs no worker by choice (`serve --no-worker`).')] = UNSET
