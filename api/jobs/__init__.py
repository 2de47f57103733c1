"""Durable diagnosis jobs.

The database row of a diagnosis is the job's record; the queue only carries its
id. Two transports share :class:`~api.jobs.runner.DiagnosisRunner`:
procrastinate on PostgreSQL (separate ``diagnose worker`` processes on any
number of machines) and persist-queue's SQLite ack-queue for the embedded
default (a worker thread inside ``diagnose serve``).
"""
