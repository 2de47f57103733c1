"""Who runs a diagnosis, and which runs next: worker leases and the fair order across keys.

**Leases.** Claiming a diagnosis writes a fresh token of the claiming attempt into
``lease_owner`` and a time ``lease_s`` ahead into ``lease_expires_at``; the worker renews it
while the diagnosis runs (:class:`api.jobs.lease.LeaseKeeper`). A running diagnosis whose
lease is live cannot be claimed by anyone else (:class:`LeaseHeld`); one whose lease expired
can. Every write of the holder (progress aside) names its token, so a worker that lost its
lease changes nothing: the token is the fence.

**Fair order.** Whatever job a worker was handed, it runs the diagnosis whose turn it is
(:func:`fair_order`): keys take turns, the key that started a diagnosis least recently going
first (one that never did, first of all), and each key's own diagnoses run oldest first.
A key with a thousand diagnoses queued delays another key's next one by one diagnosis at
most, not by a thousand. The work of a keyless service and of the schedule is one more key.
"""

from __future__ import annotations

import datetime as dt
import secrets

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.orm import Session

from api.db.models import Diagnosis, utcnow


class LeaseHeld(Exception):
    """The diagnosis is running under another worker's live lease; it must not run here now."""


def new_token() -> str:
    """The token of one claim: it names the attempt, not the worker."""
    return secrets.token_hex(16)


def claimable(now: dt.datetime):
    """Queued, or running with no live lease (its worker died, froze or lost the database)."""
    return or_(Diagnosis.status == "queued",
               and_(Diagnosis.status == "running",
                    or_(Diagnosis.lease_expires_at.is_(None), Diagnosis.lease_expires_at <= now)))


def lease_is_live(session: Session, diagnosis_id: str, now: dt.datetime) -> bool:
    return session.scalar(select(Diagnosis.id).where(
        Diagnosis.id == diagnosis_id, Diagnosis.status == "running", Diagnosis.lease_expires_at > now)) is not None


def fair_order(session: Session, delivered: str | None = None, now: dt.datetime | None = None) -> list[str]:
    """Ids of the claimable diagnoses, the next to run first (see the module docstring). Between
    keys whose turn it equally is, the key of ``delivered`` (the job the worker was handed) goes first."""
    now = now or utcnow()
    owner = func.coalesce(Diagnosis.api_key_id, -1)
    rows = session.execute(select(Diagnosis.id, owner.label("owner"))
                           .where(claimable(now)).order_by(Diagnosis.created_at, Diagnosis.id)).all()
    if not rows:
        return []
    owners = {row.owner for row in rows}
    last_started = dict(session.execute(
        select(owner, func.max(Diagnosis.started_at)).where(owner.in_(owners)).group_by(owner)).all())
    queues: dict[int, list[str]] = {}
    for row in rows:
        queues.setdefault(row.owner, []).append(row.id)
    preferred = next((row.owner for row in rows if row.id == delivered), None)
    never = dt.datetime.min
    turns = sorted(queues, key=lambda o: (_naive(last_started.get(o)) or never, o != preferred))  # stable
    # Round-robin: each key's oldest, in turn order; then each key's second oldest; and so on.
    order: list[str] = []
    depth = max(len(q) for q in queues.values())
    for i in range(depth):
        order += [queues[o][i] for o in turns if i < len(queues[o])]
    return order


def _naive(moment: dt.datetime | None) -> dt.datetime | None:
    """SQLite hands timestamps back without their zone; compare all of them as naive UTC."""
    if moment is None or moment.tzinfo is None:
        return moment
    return moment.astimezone(dt.timezone.utc).replace(tzinfo=None)


def renew(session: Session, diagnosis_id: str, token: str, lease_s: float) -> bool:
    """Extend the lease ``token`` holds; False when it holds it no more (taken over, finished,
    cancelled): the worker must stop."""
    renewed = session.execute(
        update(Diagnosis).where(Diagnosis.id == diagnosis_id, Diagnosis.status == "running",
                                Diagnosis.lease_owner == token)
        .values(lease_expires_at=utcnow() + dt.timedelta(seconds=lease_s))
        .execution_options(synchronize_session=False)).rowcount
    return renewed == 1


def forget_leases(session: Session) -> int:
    """End every lease: for a process that knows no other worker can hold one (the embedded
    service starting: its previous process is gone)."""
    return session.execute(update(Diagnosis).where(Diagnosis.status == "running", Diagnosis.lease_owner.is_not(None))
                           .values(lease_expires_at=None).execution_options(synchronize_session=False)).rowcount
