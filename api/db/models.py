"""Typed SQLAlchemy 2 models. The schema itself is owned by Alembic (``migrations/``).

Reports are stored whole (JSON) for the pages and the API, and their findings
again as rows so that they can be queried ("every diagnosis where
``sampling.split_center_pull`` fired last week").
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, ForeignKey, Integer, MetaData, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

JSONType = JSON().with_variant(JSONB(), "postgresql")

ROLES = ("user", "admin")
STATUSES = ("queued", "running", "done", "failed", "cancelled")
PENDING = ("queued", "running")


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def iso_utc(value: dt.datetime | None) -> str | None:
    """A stored timestamp as ISO 8601 in UTC; SQLite hands them back without their zone."""
    if value is None:
        return None
    return (value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)).isoformat()


def new_id() -> str:
    return uuid.uuid4().hex


NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
"""Every constraint has a name, the same on SQLite and PostgreSQL, so a migration can drop or
alter it by name (migration 0006 named those made before the convention)."""


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {dict[str, Any]: JSONType, list[Any]: JSONType}


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(128), unique=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    """sha256 of the key; the key itself is shown once, at creation, and never stored."""
    rate_limit: Mapped[str | None] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(String(8), default="user", server_default="user")
    """``user``: reads, lists and cancels its own work only; ``admin``: everyone's (:data:`ROLES`)."""
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))


class SignInSession(Base):
    """A signed-in browser: its cookie holds the token, this row the token's sha256 and the key."""

    __tablename__ = "sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    api_key_id: Mapped[int] = mapped_column(ForeignKey("api_keys.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))


class Fingerprint(Base):
    """An environment fingerprint (model hash, dtype, device, library versions), stored once."""

    __tablename__ = "fingerprints"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    """sha256 of the canonical JSON of ``data``."""
    data: Mapped[dict[str, Any]]
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Diagnosis(Base):
    __tablename__ = "diagnoses"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    status: Mapped[str] = mapped_column(String(16), index=True)
    mode: Mapped[str] = mapped_column(String(8))
    case_id: Mapped[str] = mapped_column(String(128), index=True)
    case: Mapped[dict[str, Any]]
    """The case as submitted (after validation, before defaults were filled in)."""
    request_key: Mapped[str] = mapped_column(String(64), index=True)
    """sha256 of case, mode, seed offset, model and settings: the cache key."""
    seed_offset: Mapped[int] = mapped_column(Integer, default=0)
    cost: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """The most tokens it may generate, as admitted (:func:`api.services.admission.job_cost`)."""
    report: Mapped[dict[str, Any] | None]
    verdict: Mapped[str | None] = mapped_column(String(8))
    error: Mapped[dict[str, Any] | None]
    progress: Mapped[dict[str, Any] | None]
    """While running: ``{phase, completed, total}`` as the engine reports it."""
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    api_key_id: Mapped[int | None] = mapped_column(ForeignKey("api_keys.id", ondelete="SET NULL"), index=True)
    """The key that submitted it (a nightly run's diagnoses: the run's); None on a keyless service."""
    fingerprint_id: Mapped[str | None] = mapped_column(ForeignKey("fingerprints.id"))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    started_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    lease_owner: Mapped[str | None] = mapped_column(String(32))
    """While running: the token of the worker attempt that holds it (:mod:`api.db.leases`)."""
    lease_expires_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    """Until when that worker holds it; renewed while it runs. Past it another worker may claim it."""

    findings: Mapped[list["FindingRow"]] = relationship(
        back_populates="diagnosis", cascade="all, delete-orphan", order_by="FindingRow.position"
    )


class FindingRow(Base):
    __tablename__ = "findings"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    diagnosis_id: Mapped[str] = mapped_column(ForeignKey("diagnoses.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    stage: Mapped[str] = mapped_column(String(16))
    rule: Mapped[str] = mapped_column(String(64), index=True)
    severity: Mapped[str] = mapped_column(String(8))
    evidence: Mapped[dict[str, Any]]
    advice: Mapped[str] = mapped_column(Text)

    diagnosis: Mapped[Diagnosis] = relationship(back_populates="findings")


class LibraryCase(Base):
    """One version of a case in the stored prompt library (versioned by content hash)."""

    __tablename__ = "library_cases"
    __table_args__ = (UniqueConstraint("api_key_id", "case_id", "content_hash",
                                       name="uq_library_cases_owner_case_hash"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    api_key_id: Mapped[int | None] = mapped_column(ForeignKey("api_keys.id", ondelete="SET NULL"), index=True)
    """The key that pushed it: each key keeps its own library (None: ``diagnose library push``
    and a keyless service)."""
    case_id: Mapped[str] = mapped_column(String(128), index=True)
    content_hash: Mapped[str] = mapped_column(String(80))
    """``sha256:<hex>`` of the case, as :func:`diagnose.nightly.library.content_hash` gives it."""
    tags: Mapped[list[Any]]
    case: Mapped[dict[str, Any]]
    current: Mapped[bool] = mapped_column(Boolean, default=True)
    """The latest version of its case id; older versions stay for old runs."""
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class NightlyRun(Base):
    __tablename__ = "nightly_runs"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    status: Mapped[str] = mapped_column(String(16), index=True)
    """running, done or failed (done means every case finished and the gate ran)."""
    tags: Mapped[list[Any]]
    fail_on: Mapped[str] = mapped_column(String(8), default="fail")
    seed_offset: Mapped[int] = mapped_column(Integer, default=0)
    baseline_id: Mapped[str | None] = mapped_column(ForeignKey("nightly_runs.id"))
    api_key_id: Mapped[int | None] = mapped_column(ForeignKey("api_keys.id", ondelete="SET NULL"), index=True)
    """The key that started it (None: the worker's schedule or a keyless service)."""
    summary: Mapped[dict[str, Any] | None]
    """The gate's result: counts, per-case comparisons and their evidence."""
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))

    items: Mapped[list["NightlyItem"]] = relationship(
        back_populates="run", cascade="all, delete-orphan", order_by="NightlyItem.id"
    )


class NightlyItem(Base):
    __tablename__ = "nightly_items"
    __table_args__ = (UniqueConstraint("run_id", "library_case_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("nightly_runs.id", ondelete="CASCADE"), index=True)
    library_case_id: Mapped[int] = mapped_column(ForeignKey("library_cases.id"))
    diagnosis_id: Mapped[str] = mapped_column(ForeignKey("diagnoses.id"), index=True)
    """Indexed: every finished diagnosis looks up the nightly run it belongs to."""

    run: Mapped[NightlyRun] = relationship(back_populates="items")
    library_case: Mapped[LibraryCase] = relationship()
    diagnosis: Mapped[Diagnosis] = relationship()
