-- Generated from graph_service/queries/templates/mirrortree/related.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- The `related` CTE (t, id): the objects related to X = ($2 type, $3 id) in scope $1, walked
-- live; X itself may be among them. Not a statement of its own: the head of those that walk
-- X's neighbourhood live (mirrortree.neighbourhoods).

WITH nb AS (
    SELECT from_type AS t, from_id AS id FROM graph_links
    WHERE scope_key = $1 AND to_type = $2 AND to_id = $3
    UNION
    SELECT to_type, to_id FROM graph_links
    WHERE scope_key = $1 AND from_type = $2 AND from_id = $3
), hop AS (
    SELECT $2::text AS t, $3::text AS id
    UNION
    SELECT t, id FROM nb
), rel AS (
    SELECT DISTINCT l.from_id AS id
    FROM hop JOIN graph_links l ON l.scope_key = $1 AND l.to_type = hop.t AND l.to_id = hop.id
    WHERE l.from_type = 'relation'
), related AS (
    SELECT t, id FROM nb
    UNION
    SELECT 'relation', id FROM rel
    UNION
    SELECT l.to_type, l.to_id
    FROM rel JOIN graph_links l
      ON l.scope_key = $1 AND l.from_type = 'relation' AND l.from_id = rel.id
)
