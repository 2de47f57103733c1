"""A throwaway PostgreSQL cluster of the test's own, for tests that stop and start a database.

The machine's PostgreSQL (127.0.0.1:5432) is shared with everything else that runs
here, CI included, so no test may stop it. This cluster lives in a fresh temporary
directory, listens on a free port on 127.0.0.1 only, trusts local connections and
is deleted when the test ends. As root, the server runs as the ``postgres`` user
(initdb refuses root); otherwise as the current user.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from tests.pages.live import free_port

__all__ = ["PrivateCluster", "private_cluster"]


def _bin_dir() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


class PrivateCluster:
    """initdb'd into ``directory``; :meth:`start` and :meth:`stop` as often as a test likes."""

    def __init__(self, bin_dir: Path, directory: Path) -> None:
        self.bin_dir, self.directory = bin_dir, directory
        self.data = directory / "data"
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            shutil.chown(directory, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync")

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.directory} -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.directory / "server.log"), "-o", options,
                  "-w", "-t", "60", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")

    def running(self) -> bool:
        status = subprocess.run(self._command("pg_ctl", "-D", str(self.data), "status"), capture_output=True)
        return status.returncode == 0

    def _command(self, program: str, *args: str) -> list[str]:
        command = [str(self.bin_dir / program), *args]
        return ["runuser", "-u", "postgres", "--", *command] if self._as_postgres else command

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run(self._command(program, *args), capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{program} failed ({done.returncode}): {done.stderr or done.stdout}")


@contextlib.contextmanager
def private_cluster() -> Iterator[PrivateCluster]:
    """A started cluster of the caller's own, stopped and deleted afterwards (skips without PostgreSQL)."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        pytest.skip("needs PostgreSQL's server programs (initdb, pg_ctl) for a private cluster")
    directory = Path(tempfile.mkdtemp(prefix="rag-diagnose-pg-"))  # not under pytest's root-only tmp dir
    try:
        cluster = PrivateCluster(bin_dir, directory)
        cluster.start()
        try:
            yield cluster
        finally:
            if cluster.running():
                cluster.stop()
    finally:
        shutil.rmtree(directory, ignore_errors=True)
