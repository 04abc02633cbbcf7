"""The replica's position and the transactions every read runs in."""

# Where a server stands: replayed (and received) WAL on a standby, the current WAL position on
# a primary (allowed only with MIRRORTREE_GRAPH_ALLOW_PRIMARY); how long ago, by the standby's
# own clock, the last commit it replayed was made (NULL on a primary, and on a standby that has
# replayed no commit since it started); and whether a WAL receiver is connected to the primary
# (pg_stat_wal_receiver shows a row, to every role, only once it has connected; its details are
# hidden from roles without pg_read_all_stats, so the row alone is asked for).
REPLICA_POSITION = """
SELECT pg_is_in_recovery() AS standby,
       (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()
             ELSE pg_current_wal_lsn() END)::text AS lsn,
       (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_receive_lsn()
             ELSE pg_current_wal_lsn() END)::text AS received,
       extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8
           AS replay_age_s,
       EXISTS (SELECT FROM pg_stat_wal_receiver) AS receiving
"""

# The primary's current WAL position, which each replica's lag is measured against (fails on a
# server in recovery: a standby is no reference).
PRIMARY_POSITION = "SELECT pg_current_wal_lsn()::text"

REPLAYED_AT_LEAST = """
SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()
             ELSE pg_current_wal_lsn() END) >= $1::pg_lsn
"""

# Every read is one REPEATABLE READ READ ONLY transaction on a replica, so that a page, its
# counts and its coverage come from one snapshot.
BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
# Context reads and searches also use each statement's generic plan, set in the same round
# trip, because their statements are written so that one plan serves every value.
BEGIN_READ_WITH_GENERIC_PLANS = (
    "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; "
    "SET LOCAL plan_cache_mode = force_generic_plan"
)
# Within such a transaction: plan the next statements with their values, or generically again.
PLAN_WITH_VALUES = "SET LOCAL plan_cache_mode = force_custom_plan"
PLAN_GENERICALLY = "SET LOCAL plan_cache_mode = force_generic_plan"
