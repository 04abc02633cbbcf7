"""Running the PostgreSQL binaries, as an unprivileged OS user when started by root.

PostgreSQL refuses to run as root, so when root runs the cluster every binary runs as
``MIRRORTREE_PG_OS_USER``, else ``postgres``, else a system user ``mirrortree`` created on demand
(through runuser, or setpriv where runuser is missing).
"""

from __future__ import annotations

import contextlib
import logging
import os
import pwd
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from devtools.pgcluster.config import COMMAND_TIMEOUT_S, ENV_OS_USER, FALLBACK_OS_USER, ClusterError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OsUser:
    """The OS user PostgreSQL runs as."""

    name: str | None  # None: run as the current user
    uid: int
    gid: int


def resolve_os_user() -> OsUser:
    """The current user, or the unprivileged user to run PostgreSQL as when we are root."""
    if os.geteuid() != 0:
        return OsUser(None, os.geteuid(), os.getegid())
    wanted = os.environ.get(ENV_OS_USER, "").strip()
    if wanted:
        try:
            entry = pwd.getpwnam(wanted)
        except KeyError:
            raise ClusterError(
                f"{ENV_OS_USER}={wanted} names no OS user; create that user or unset the variable"
            ) from None
        if entry.pw_uid == 0:
            raise ClusterError(
                f"{ENV_OS_USER}={wanted} is root, but PostgreSQL refuses to run as root; "
                "name an unprivileged user"
            )
        return OsUser(entry.pw_name, entry.pw_uid, entry.pw_gid)
    for name in ("postgres", FALLBACK_OS_USER):
        with contextlib.suppress(KeyError):
            entry = pwd.getpwnam(name)
            if entry.pw_uid != 0:
                return OsUser(entry.pw_name, entry.pw_uid, entry.pw_gid)
    useradd = shutil.which("useradd", path=_admin_path())
    if useradd is None:
        raise ClusterError(
            "PostgreSQL refuses to run as root and there is no `postgres` OS user to run it as; "
            f"create an unprivileged user and set {ENV_OS_USER} to its name"
        )
    log.info("creating system user %s to run PostgreSQL as (it refuses root)", FALLBACK_OS_USER)
    res = subprocess.run(
        [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", FALLBACK_OS_USER],
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    try:
        entry = pwd.getpwnam(FALLBACK_OS_USER)
    except KeyError:
        raise ClusterError(
            f"could not create the OS user {FALLBACK_OS_USER!r} to run PostgreSQL: "
            f"{res.stderr.strip()}; create an unprivileged user and set {ENV_OS_USER} to its name"
        ) from None
    return OsUser(entry.pw_name, entry.pw_uid, entry.pw_gid)


def _admin_path() -> str:
    # root's PATH may lack the sbin directories that hold runuser/useradd when started from a
    # minimal environment.
    parts = os.environ.get("PATH", "").split(os.pathsep)
    parts += ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
    return os.pathsep.join(p for p in parts if p)


def _clean_env() -> dict[str, str]:
    # Inherited libpq variables (PGHOST, PGPASSWORD, PGOPTIONS, ...) would silently redirect or
    # alter our explicit connections; the message locale keeps captured errors in English.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    for key in ("LC_ALL", "LANGUAGE"):
        env.pop(key, None)
    env["LC_MESSAGES"] = "C"
    env["PGCONNECT_TIMEOUT"] = "5"
    return env


@dataclass(frozen=True)
class Runner:
    """Runs commands and the binaries of one bin directory as the PostgreSQL OS user."""

    bindir: Path
    user: OsUser
    prefix: tuple[str, ...]

    @classmethod
    def create(cls, bindir: Path) -> Runner:
        user = resolve_os_user()
        if user.name is None:
            return cls(bindir, user, ())
        runuser = shutil.which("runuser", path=_admin_path())
        if runuser:
            return cls(bindir, user, (runuser, "-u", user.name, "--"))
        setpriv = shutil.which("setpriv", path=_admin_path())
        if setpriv:
            ids = (f"--reuid={user.uid}", f"--regid={user.gid}", "--init-groups")
            return cls(bindir, user, (setpriv, *ids, "--"))
        raise ClusterError(
            "PostgreSQL refuses to run as root and neither runuser nor setpriv is available to "
            "switch users; run this command as an unprivileged user"
        )

    def exec(
        self, argv: Sequence[str], *, timeout: float = COMMAND_TIMEOUT_S
    ) -> subprocess.CompletedProcess[str]:
        """Run argv as the PostgreSQL OS user, capturing output; never raises on exit status."""
        try:
            return subprocess.run(
                [*self.prefix, *argv],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                env=_clean_env(),
                # The OS user may not be allowed into the caller's working directory.
                cwd="/",
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise ClusterError(
                f"`{' '.join(argv)}` did not finish within {timeout:.0f} s"
            ) from None

    def tool(
        self, name: str, *args: str, timeout: float = COMMAND_TIMEOUT_S
    ) -> subprocess.CompletedProcess[str]:
        """Run a binary from the PostgreSQL bin directory."""
        return self.exec([str(self.bindir / name), *args], timeout=timeout)

    def chown(self, path: Path) -> None:
        """Hand path to the PostgreSQL OS user (only needed when running as root)."""
        if self.user.name is not None:
            os.chown(path, self.user.uid, self.user.gid)

    def blocked_folder(self, path: Path) -> Path | None:
        """The first folder on the way to path (path included) this user cannot enter."""
        for folder in (*reversed(path.parents), path):
            if self.exec(["test", "-x", str(folder)]).returncode != 0:
                return folder
        return None
