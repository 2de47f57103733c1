"""The private cluster the fault tests stop and start, beside the machine's PostgreSQL that no test stops."""

from __future__ import annotations

import psycopg
import pytest

from tests.api.conftest import ADMIN_URL
from tests.api.private_postgres import private_cluster

pytestmark = pytest.mark.postgres


def test_a_private_cluster_restarts_without_touching_the_machines():
    machine = psycopg.connect(ADMIN_URL, connect_timeout=5)
    with private_cluster() as cluster:
        with psycopg.connect(cluster.url, connect_timeout=5) as conn:
            assert conn.execute("select 1").fetchone() == (1,)
        cluster.stop()
        assert not cluster.running()
        cluster.start()
        with psycopg.connect(cluster.url, connect_timeout=5) as conn:
            assert conn.execute("select 2").fetchone() == (2,)
    assert machine.execute("select 3").fetchone() == (3,)
