"""SQL of purging an archived branch (T16): what it touches, and the rewrites that leave
tombstones where content was."""

from __future__ import annotations

# The tree rows a purge writes in, locked so that no node is appended to them meanwhile.
LOCK_TREES = "SELECT id FROM trees WHERE id = any($1::uuid[]) ORDER BY id FOR UPDATE"

# The subtree under node $1 (itself included), in creation order, with its text.
SUBTREE = """
WITH RECURSIVE sub AS (
    SELECT id FROM nodes WHERE id = $1
    UNION ALL
    SELECT n.id FROM nodes n JOIN sub ON n.parent_id = sub.id
)
SELECT n.id::text, n.tree_id::text, n.text FROM sub JOIN nodes n ON n.id = sub.id
ORDER BY n.ordinal
"""

NODES_TEXT = """
SELECT id::text, tree_id::text, text FROM nodes WHERE id = any($1::uuid[]) ORDER BY ordinal
"""

# A bud still streaming: its chunks would keep arriving after the purge.
STREAMING = """
SELECT id::text FROM nodes WHERE id = any($1::uuid[]) AND answer_state = 'streaming' LIMIT 1
"""

# A delegated task on the branch that may still run: its result would land in the branch.
ACTIVE_TASK = """
SELECT id::text, state FROM tasks
WHERE branch_node_id = any($1::uuid[]) AND state IN ('queued', 'running', 'needs_instructions')
ORDER BY position LIMIT 1
"""

SUB_BRANCHES = """
SELECT node_id::text FROM branches WHERE node_id = any($1::uuid[]) AND node_id <> $2
ORDER BY node_id
"""

# Transplanted copies of nodes $1 (text ids): the transplant, the source and the copy.
COPIES = """
SELECT t.tree_id::text, t.source_node_id::text AS transplanted, c.key AS source_node_id,
       c.value AS copy_node_id
FROM transplants t, jsonb_each_text(t.copies) c
WHERE c.key = any($1::text[])
ORDER BY t.tree_id, c.key
"""

# Citations held by nodes outside $1 that cite a node of $1 (text ids).
CITATIONS_IN = """
SELECT n.id::text AS citing_node_id, n.tree_id::text AS citing_tree_id,
       (c.ord - 1)::int AS position, c.value->>'node_id' AS cited_node_id
FROM nodes n, jsonb_array_elements(n.citations) WITH ORDINALITY AS c (value, ord)
WHERE n.citations <> '[]'::jsonb AND n.id <> all($1::uuid[])
  AND c.value->>'node_id' = any($2::text[])
ORDER BY n.id, c.ord
"""

CANON_VERSIONS = """
SELECT id::text, tree_id::text, version, node_ids::text[] AS node_ids
FROM main_line_versions WHERE node_ids && $1::uuid[]
ORDER BY id
"""

# Story-graph source references to the messages $1 (node ids as text).
GRAPH_REFERENCES = """
SELECT result_id, object_type, object_id FROM graph_objects
WHERE object_type = 'source_reference' AND details->>'source_type' = 'message'
  AND details->>'source_id' = any($1::text[])
"""

# Objects citing one of the references ($1 result ids, $2 reference ids, pairwise).
GRAPH_CITING = """
SELECT DISTINCT o.result_id, o.object_type, o.object_id
FROM unnest($1::text[], $2::text[]) AS r (result_id, object_id)
JOIN graph_links l ON l.result_id = r.result_id AND l.link = 'cites'
                  AND l.to_type = 'source_reference' AND l.to_id = r.object_id
JOIN graph_objects o ON o.result_id = l.result_id AND o.object_type = l.from_type
                    AND o.object_id = l.from_id
"""

# Every other object of the results $1: checked for quoting the purged content.
GRAPH_RESULT_OBJECTS = """
SELECT result_id, object_type, object_id, title, body FROM graph_objects
WHERE result_id = any($1::text[]) AND object_type <> 'source_reference'
"""

# Preferences about the objects ($1 result ids, $2 types, $3 object ids) in their own scope:
# an object id alone is only unique within a scope.
PREFERENCES_ABOUT = """
SELECT p.id, p.subject FROM preferences p
WHERE EXISTS (
    SELECT 1 FROM unnest($1::text[], $2::text[], $3::text[]) AS f (result_id, type, id)
    JOIN graph_objects o ON o.result_id = f.result_id AND o.object_type = f.type
                        AND o.object_id = f.id
    WHERE o.scope_key = p.scope_key
      AND p.about @> jsonb_build_array(jsonb_build_object('type', f.type, 'id', f.id)))
ORDER BY p.id
"""

MERGE_REFERENCES = """
SELECT question_id::text, tree_id::text, position, source_node_id::text
FROM merge_references WHERE source_node_id = any($1::uuid[])
ORDER BY question_id, position
"""

# Items of recorded contexts holding purged content: a purged node's own items ($1), or the
# items of citations pointing in ($2 subjects).
CONTEXT_COPIES = """
SELECT v.id::text AS context_version_id, i->>'subject' AS subject
FROM context_versions v, jsonb_array_elements(v.items) i
WHERE i->>'node_id' = any($1::text[]) OR i->>'subject' = any($2::text[])
ORDER BY v.id, i->>'subject'
"""

INSERT_PURGE = """
INSERT INTO purges (id, branch_id, tree_id, preview_token, purged_by, reason, response)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING purged_at
"""

# The response is known only once the purge is applied (it carries the purge's time).
SET_PURGE_RESPONSE = "UPDATE purges SET response = $2 WHERE id = $1"

SELECT_PURGE = """
SELECT id::text, branch_id::text, tree_id::text, preview_token, purged_by, reason, purged_at,
       response
FROM purges WHERE branch_id = $1
"""

TOMBSTONE_OF = """
SELECT p.id::text, p.branch_id::text, p.tree_id::text, p.purged_by, p.reason, p.purged_at
FROM purged_nodes d JOIN purges p ON p.id = d.purge_id WHERE d.node_id = $1
"""

INSERT_PURGED_NODES = """
INSERT INTO purged_nodes (node_id, purge_id, tree_id)
SELECT x.id, $2, n.tree_id FROM unnest($1::uuid[]) x (id) JOIN nodes n ON n.id = x.id
"""

# The content goes; id, place in the tree, kind and times stay as the tombstone's frame.
CLEAR_NODES = """
UPDATE nodes SET text = '', reasoning_summary = '', evidence = '[]', tool_trace = '[]',
       attachments = '[]', citations = '[]', conditions = '{}', stop_reason = NULL,
       comparison = CASE WHEN comparison IS NULL THEN NULL
                         ELSE jsonb_set(comparison, '{criteria}', '[]') END
WHERE id = any($1::uuid[])
"""

CLEAR_CHUNKS = "DELETE FROM bud_chunks WHERE node_id = any($1::uuid[])"

# A delegated task's goal and what its worker reported are the branch's content too.
CLEAR_TASKS = """
UPDATE tasks SET goal = '', stop_conditions = '{}' WHERE branch_node_id = any($1::uuid[])
"""
CLEAR_TASK_REPORTS = """
UPDATE task_reports SET message = '', evidence = '[]'
WHERE task_id IN (SELECT id FROM tasks WHERE branch_node_id = any($1::uuid[]))
"""
CLEAR_SOURCE_REVISIONS = "UPDATE source_revisions SET text = '' WHERE node_id = any($1::uuid[])"
CLEAR_SUMMARIES = "DELETE FROM context_summaries WHERE node_id = any($1::uuid[])"
CLEAR_COMMITMENTS = "UPDATE commitments SET statement = '' WHERE node_id = any($1::uuid[])"
# What rulings, real-world effects and invitations said of the purged nodes; each keeps its
# frame (who, when, allowed or not, which tool) beside the node's tombstone.
CLEAR_RULINGS = """
UPDATE arbiter_rulings SET action = '', reason = '' WHERE node_id = any($1::uuid[])
"""
CLEAR_EFFECTS = "UPDATE effects SET action = '', parameters = '{}' WHERE node_id = any($1::uuid[])"
CLEAR_INVITATIONS = """
UPDATE canon_invitations SET reason = '', decision_reason = '' WHERE node_id = any($1::uuid[])
"""
# The history of the purged branch and of the branches inside it ($1: their roots).
CLEAR_TRANSITIONS = """
UPDATE branch_transitions
SET reason = '', summary = CASE WHEN summary IS NULL THEN NULL ELSE '' END
WHERE node_id = any($1::uuid[])
"""

SELECT_CITATIONS = "SELECT citations FROM nodes WHERE id = $1 FOR UPDATE"
REWRITE_CITATIONS = "UPDATE nodes SET citations = $2::jsonb WHERE id = $1"

SELECT_SNAPSHOT = "SELECT snapshot FROM main_line_versions WHERE id = $1 FOR UPDATE"

# The candidates proposed with version $1: their words give way to the tombstone $2.
TOMBSTONE_CANDIDATES = """
UPDATE canon_candidates SET subject = '', text = $2 WHERE version_id = $1 AND text <> ''
"""
REWRITE_SNAPSHOT = "UPDATE main_line_versions SET snapshot = $2::jsonb WHERE id = $1"

SELECT_CONTEXT_ITEMS = "SELECT items FROM context_versions WHERE id = $1 FOR UPDATE"
REWRITE_CONTEXT_ITEMS = "UPDATE context_versions SET items = $2::jsonb WHERE id = $1"

# The branch's own records whose words go with it (the tables of user_content.CONTENT that a
# node's records are in), for the preview.
BRANCH_RECORDS = """
SELECT 'arbiter_rulings' AS table_name, id::text AS id
FROM arbiter_rulings WHERE node_id = any($1::uuid[])
UNION ALL
SELECT 'canon_invitations', id::text FROM canon_invitations WHERE node_id = any($1::uuid[])
UNION ALL
SELECT 'commitments', id::text FROM commitments WHERE node_id = any($1::uuid[])
UNION ALL
SELECT 'context_summaries', subject || '@' || version
FROM context_summaries WHERE node_id = any($1::uuid[])
UNION ALL
SELECT 'effects', id::text FROM effects WHERE node_id = any($1::uuid[])
UNION ALL
SELECT 'tasks', id::text FROM tasks WHERE branch_node_id = any($1::uuid[])
ORDER BY 1, 2
"""

# Transitions holding words: those of branches $1 (the purged one and those inside), and those
# of other branches of trees $2 (checked for quoting the content).
TRANSITIONS_INSIDE = """
SELECT node_id::text AS branch_id, revision, summary IS NOT NULL AS conclusion
FROM branch_transitions
WHERE node_id = any($1::uuid[]) AND (reason <> '' OR coalesce(summary, '') <> '')
ORDER BY node_id, revision
"""
TRANSITIONS_AROUND = """
SELECT t.node_id::text AS branch_id, t.revision, t.summary IS NOT NULL AS conclusion,
       coalesce(t.summary, '') AS summary, t.reason
FROM branch_transitions t JOIN branches b ON b.node_id = t.node_id
WHERE b.tree_id = any($2::uuid[]) AND t.node_id <> all($1::uuid[])
  AND (t.reason <> '' OR coalesce(t.summary, '') <> '')
ORDER BY t.node_id, t.revision
"""
RETRACT_TRANSITION = """
UPDATE branch_transitions
SET reason = $3, summary = CASE WHEN summary IS NULL THEN NULL ELSE $3 END
WHERE node_id = $1 AND revision = $2
"""

# Transplanted trees whose origin keeps a purged node ($1: ids as text) among its ancestors.
ORIGINS_HOLDING = """
SELECT t.tree_id::text AS tree_id, array_agg(e->>'id' ORDER BY e->>'id') AS node_ids
FROM transplants t, jsonb_array_elements(t.ancestor_path) e
WHERE e->>'id' = any($1::text[])
GROUP BY t.tree_id
ORDER BY t.tree_id
"""
SELECT_ANCESTORS = "SELECT ancestor_path FROM transplants WHERE tree_id = $1 FOR UPDATE"
REWRITE_ANCESTORS = "UPDATE transplants SET ancestor_path = $2::jsonb WHERE tree_id = $1"

# A citation pointing in, kept as the purge chose: its context summaries go if chosen ($1:
# their subjects, citation:<node>:<position>).
CLEAR_CITATION_SUMMARIES = "DELETE FROM context_summaries WHERE subject = any($1::text[])"

# A source reference to a purged message: its saved fragment removed, the purge on record.
TOMBSTONE_REFERENCE = """
UPDATE graph_objects
SET body = '', title = 'message ' || (details->>'source_id') || ' (purged)',
    confirmation_state = 'retracted', details = details || jsonb_build_object('purged', $3::jsonb)
WHERE result_id = $1 AND object_type = 'source_reference' AND object_id = $2
"""

# A fact resting on (or quoting) purged content: retracted, its text replaced by why, its title
# too when it quotes the content ($6) (a relation's reason, repeated in its details, goes).
OBJECT_TITLE = """
SELECT title FROM graph_objects WHERE result_id = $1 AND object_type = $2 AND object_id = $3
"""
RETRACT_OBJECT = """
UPDATE graph_objects
SET title = CASE WHEN $6 THEN 'retracted' ELSE title END, body = $4,
    confirmation_state = 'retracted',
    details = (details - 'reason') || jsonb_build_object('purged', $5::jsonb)
WHERE result_id = $1 AND object_type = $2 AND object_id = $3
"""

# A source reference to a purged message, kept as the purge chose: the fragment stays, the
# purge is on record.
MARK_REFERENCE = """
UPDATE graph_objects
SET details = details || jsonb_build_object('purged', $3::jsonb)
WHERE result_id = $1 AND object_type = 'source_reference' AND object_id = $2
"""

# The shared leaf first stored as that graph object: every scope using it reads the retraction.
RETRACT_LEAF = """
UPDATE leaves SET text = $3, confirmation_state = 'retracted'
WHERE result_id = $1 AND object_id = $2
"""

RETRACT_PREFERENCE = """
UPDATE preferences
SET subject = 'retracted', text = $2, revision = revision + 1, updated_at = clock_timestamp()
WHERE id = $1
"""

PURGE_BRANCH = """
UPDATE branches SET state = 'purged', revision = revision + 1, updated_at = clock_timestamp()
WHERE node_id = $1
RETURNING revision
"""

OPEN_PURGED_BRANCH = """
INSERT INTO branches (node_id, tree_id, state, revision) VALUES ($1, $2, 'active', 1)
ON CONFLICT (node_id) DO NOTHING
"""

BUMP_TREE = """
UPDATE trees SET revision = revision + 1, updated_at = clock_timestamp() WHERE id = $1
"""


# Lets this transaction rewrite the content of immutable records (migration 0025's triggers).
NAME_PURGE = "SELECT set_config('mirrortree.purge', $1, true)"
