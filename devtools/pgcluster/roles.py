"""The services' least-privilege login roles on the local cluster, and DSNs that use them.

Migration 0022 grants the rows (and nothing else) to `mirrortree_writer`, which tree_service
serves as, and SELECT to `mirrortree_reader`, which graph_service reads as; the owner role
(cfg.user) only runs migrations. Here both become login roles; loopback trust authenticates
them locally, as it does the owner.
"""

from __future__ import annotations

import logging
from urllib.parse import quote, urlsplit, urlunsplit

from devtools.pgcluster.config import ClusterConfig
from devtools.pgcluster.processes import Node
from devtools.pgcluster.runner import Runner
from devtools.pgcluster.sql import ident, literal, query

log = logging.getLogger(__name__)

WRITER_ROLE = "mirrortree_writer"
READER_ROLE = "mirrortree_reader"


def ensure_service_roles(runner: Runner, cfg: ClusterConfig, node: Node) -> None:
    """Create (or give LOGIN to) the writer and reader roles on the primary."""
    for role in (WRITER_ROLE, READER_ROLE):
        exists = query(
            runner, cfg.host, node, f"SELECT 1 FROM pg_roles WHERE rolname = {literal(role)}"
        )
        if exists != "1":
            log.info("creating role %s", role)
            query(runner, cfg.host, node, f"CREATE ROLE {ident(role)} LOGIN")
        else:
            query(
                runner,
                cfg.host,
                node,
                f"ALTER ROLE {ident(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE",
            )
    # A second lock on the reader: its sessions start read-only even where a grant slipped.
    query(
        runner,
        cfg.host,
        node,
        f"ALTER ROLE {ident(READER_ROLE)} SET default_transaction_read_only = on",
    )


def as_role(dsn: str, role: str) -> str:
    """dsn (a postgresql:// URL without a password) connecting as role instead."""
    parts = urlsplit(dsn)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{quote(role, safe='')}@{host}"))


def writer_dsn(dsn: str) -> str:
    """The DSN tree_service serves with (rows only; migrations use the owner's dsn)."""
    return as_role(dsn, WRITER_ROLE)


def reader_dsn(dsn: str) -> str:
    """The DSN graph_service reads with, on a replica or on the primary (switches)."""
    return as_role(dsn, READER_ROLE)
