"""SQL of realms and effects: arbiter rulings, the effects ledger and commitments."""

from tree_service.commitments import COLUMNS as COMMITMENT_COLUMNS

RULING_COLUMNS = (
    "id::text, tree_id::text, node_id::text, arbiter, action, allowed, reason, created_at"
)

INSERT_RULING = (
    """
INSERT INTO arbiter_rulings (id, tree_id, node_id, arbiter, action, allowed, reason)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING """
    + RULING_COLUMNS
)

EFFECT_COLUMNS = """
id::text, tree_id::text, node_id::text, kind, ruling_id::text, tool, action,
parameters::text AS parameters, recorded_by, created_at, main_line_version_id::text
"""

# The first real-experience main-line version of tree $1 holding node $2.
INSERT_EFFECT = (
    """
INSERT INTO effects (id, tree_id, node_id, kind, ruling_id, tool, action, parameters,
                     recorded_by, main_line_version_id)
VALUES ($1, $2, $3, 'real_world_action', $4, $5, $6, $7, $8, $9)
RETURNING """
    + EFFECT_COLUMNS
)

# A page of a tree's ledger after position $2 (the ordinal of the last row of the previous
# page), at most $3.
LIST_EFFECTS = (
    "SELECT * FROM (SELECT row_number() OVER (ORDER BY created_at, id) AS position, "
    + EFFECT_COLUMNS
    + " FROM effects WHERE tree_id = $1) e WHERE e.position > $2 ORDER BY e.position LIMIT $3"
)


INSERT_COMMITMENT = """
INSERT INTO commitments (id, tree_id, node_id, kind, statement, realm, world, stated_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
"""

SELECT_COMMITMENT = "SELECT " + COMMITMENT_COLUMNS + " FROM commitments c WHERE c.id = $1"

# The commitments stated at nodes $1, in the order they were stated.
STATED_AT = (
    "SELECT "
    + COMMITMENT_COLUMNS
    + " FROM commitments c WHERE c.node_id = any($1::uuid[]) ORDER BY c.created_at, c.id"
)

LOCK_COMMITMENT = "SELECT id FROM commitments WHERE id = $1 FOR UPDATE"

CONFIRM_COMMITMENT = """
UPDATE commitments SET confirmed_by = $2, confirmed_at = clock_timestamp() WHERE id = $1
"""

WITHDRAW_COMMITMENT = """
UPDATE commitments SET withdrawn_by = $2, withdrawn_at = clock_timestamp() WHERE id = $1
"""

LIST_COMMITMENTS = (
    "SELECT * FROM (SELECT row_number() OVER (ORDER BY c.created_at, c.id) AS position, "
    + COMMITMENT_COLUMNS
    + " FROM commitments c WHERE c.tree_id = $1) x WHERE x.position > $2"
    + " ORDER BY x.position LIMIT $3"
)

SELECT_RULINGS = "SELECT " + RULING_COLUMNS + " FROM arbiter_rulings WHERE id = any($1::uuid[])"

SELECT_EFFECTS = "SELECT " + EFFECT_COLUMNS + " FROM effects WHERE id = any($1::uuid[])"

SELECT_COMMITMENTS = (
    "SELECT " + COMMITMENT_COLUMNS + " FROM commitments c WHERE c.id = any($1::uuid[])"
)
