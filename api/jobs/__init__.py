"""Durable diagnosis jobs.

The database row of a diagnosis is the job's record; the queue only carries its
id. Two transports share :class:`~api.jobs.runner.DiagnosisRunner`:
procrastinate on PostgreSQL (separate ``diagnose worker`` processes on any
number of machines) and persist-queue's SQLite ack-queue for the embedded
default (a worker thread inside ``diagnose serve``).

Whatever a job does, it cannot hold the service: an attempt past
``job_timeout_s`` fails; a job whose worker died or froze runs again (on
PostgreSQL every live worker requeues it within ``stalled_after_s``), at most
``max_attempts`` times; ``/healthz`` says 503 while no worker would run it.

Which diagnosis a delivered job runs, and who may run it, is the database's to say
(:mod:`api.db.leases`): the one whose turn it is across keys, under a lease that the worker
renews through database outages (:mod:`api.jobs.lease`) and that fences its writes.
"""
