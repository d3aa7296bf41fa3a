"""A throwaway PostgreSQL server for tests: `initdb` + `pg_ctl` in a temporary folder, one per test session.

The server listens on a unix socket only (no TCP port: unit tests run with network sockets disabled, and
two sessions on one machine cannot collide), with durability off (fsync, synchronous commit) since its
data dies with the session. initdb refuses to run as root, so as root the server runs as the `postgres`
user of the Debian package. The superuser `postgres` connects without a password; every other role needs
its password (scram-sha-256), so a test can check that a URL's password is really used.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

PORT = 5432  # only names the socket file (.s.PGSQL.5432) inside this server's own folder
SUPERUSER = "postgres"
HBA = f"local all {SUPERUSER} trust\nlocal all all scram-sha-256\n"
SETTINGS = """
listen_addresses = ''
unix_socket_directories = '{socket_dir}'
port = {port}
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
"""


def server_bindir() -> Path | None:
    """The folder holding `initdb` and `pg_ctl`: `pg_config --bindir`, the Debian layout, else PATH."""
    candidates: list[Path] = []
    if pg_config := shutil.which("pg_config"):
        done = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        candidates.append(Path(done.stdout.strip()))
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name)
                      if Path(p).parent.name.isdigit() else 0, reverse=True)
    candidates += [Path(p) for p in versions]
    if initdb := shutil.which("initdb"):
        candidates.append(Path(initdb).resolve().parent)
    return next((c for c in candidates if (c / "initdb").is_file() and (c / "pg_ctl").is_file()), None)


def unavailable_reason() -> str | None:
    """Why no throwaway server can start here (no server binaries, root without a `postgres` user), else None."""
    import pwd

    if server_bindir() is None:
        return "no PostgreSQL server binaries (initdb, pg_ctl) on this machine: apt-get install postgresql"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root, and initdb refuses root: no 'postgres' user to run the server as"
    return None


@dataclass
class PostgresServer:
    """A running throwaway server; `url` names a database on it."""

    bindir: Path
    root: Path
    run_as: str | None

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root / "socket"

    def url(self, database: str = "postgres", user: str = SUPERUSER, password: str | None = None) -> str:
        credentials = f"{user}:{password}" if password else user
        return f"postgresql://{credentials}@/{database}?host={self.socket_dir}&port={PORT}"

    def admin(self, *statements: str, database: str = "postgres") -> None:
        """Run statements as the superuser, outside a transaction (CREATE DATABASE needs that)."""
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as connection:
            for statement in statements:
                connection.execute(statement)

    def create_database(self, owner: str = SUPERUSER) -> str:
        """A new empty database (owned by `owner`); returns its name."""
        name = f"t_{uuid.uuid4().hex[:16]}"
        self.admin(f'CREATE DATABASE {name} OWNER "{owner}"')
        return name

    def _pg_ctl(self, *args: str) -> None:
        command = [str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"), *args]
        done = subprocess.run(command, user=self.run_as, capture_output=True, text=True, check=False, timeout=120)
        if done.returncode != 0:
            log = (self.root / "server.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"pg_ctl {args[0]} failed: {done.stderr.strip()}\n{log}")

    def start(self) -> None:
        self._pg_ctl("start", "-w", "-t", "60")

    def halt(self) -> None:
        """Stop the server (fast: open sessions are cut off), keeping its data for `start`."""
        self._pg_ctl("stop", "-m", "fast", "-w")

    def restart(self) -> None:
        """Stop and start again, as a server restart mid-run would."""
        self.halt()
        self.start()

    def stop(self) -> None:
        try:
            self._pg_ctl("stop", "-m", "immediate", "-w")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def start_server(bindir: Path) -> PostgresServer:
    """initdb a fresh cluster in a new temporary folder and start it."""
    run_as = "postgres" if os.geteuid() == 0 else None
    root = Path(tempfile.mkdtemp(prefix="reso-pg-"))
    (root / "socket").mkdir()
    if run_as is not None:
        for path in (root, root / "socket"):
            shutil.chown(path, user=run_as)
    server = PostgresServer(bindir=bindir, root=root, run_as=run_as)
    done = subprocess.run([str(bindir / "initdb"), "-D", str(server.data), "-U", SUPERUSER, "-A", "trust",
                           "--no-locale", "-E", "UTF8", "--no-sync", "--no-instructions"],
                          user=run_as, capture_output=True, text=True, check=False, timeout=120)
    if done.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {done.stderr.strip()[-2000:]}")
    (server.data / "pg_hba.conf").write_text(HBA, encoding="utf-8")
    with (server.data / "postgresql.conf").open("a", encoding="utf-8") as conf:
        conf.write(SETTINGS.format(socket_dir=server.socket_dir, port=PORT))
    server.start()
    return server
