-- G9 for the leaves recorded before their extraction was keyed: each leaf fact whose key is
-- exact (one source version it cites with a known range, a source that exists and that the
-- leaf's scope may read, the same text) becomes a shared leaf under the contract "legacy",
-- and every copy of it, in whatever scope, a use of that one leaf. Nothing else is guessed:
-- no copy is rewritten or dropped, no entity is merged (same name is not same entity), and
-- no extraction coverage is claimed (PlanExtraction never counts "legacy" as extracted).
-- What was linked and what stays separate, and why, is kept in leaf_migration_report
-- (`python -m devtools.leaf_report` prints it) and raised as NOTICEs.

CREATE TABLE leaf_migration_report (
    outcome     text        NOT NULL CHECK (outcome IN ('linked', 'shared', 'separate')),
    reason      text        NOT NULL,
    copies      bigint      NOT NULL,
    leaves      bigint      NOT NULL,
    reported_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TEMPORARY TABLE legacy_leaf_keys ON COMMIT DROP AS
WITH leaf AS (
    SELECT o.result_id, o.object_id, o.scope_key, o.body, o.confirmation_state,
           o.event_time_start, o.event_time_end, o.event_time_precision, o.event_time_basis,
           o.recorded_at, o.details, r.graph_revision, r.scope_projects
    FROM graph_objects o JOIN review_results r ON r.result_id = o.result_id
    WHERE o.object_type = 'leaf_fact'
),
cited AS (
    SELECT l.result_id, l.object_id,
           count(s.object_id) AS found,
           count(*) AS named,
           count(DISTINCT jsonb_build_array(s.details -> 'source_type', s.details -> 'source_id',
                                            s.details -> 'source_version')) AS versions,
           min(s.details ->> 'source_type') AS source_type,
           min(s.details ->> 'source_id') AS source_id,
           min(s.details ->> 'source_version') AS source_version,
           min((s.details ->> 'fragment_start')::bigint) AS lo,
           max((s.details ->> 'fragment_end')::bigint) AS hi,
           bool_and((s.details ->> 'fragment_end')::bigint
                    > (s.details ->> 'fragment_start')::bigint) AS positioned
    FROM leaf l
    CROSS JOIN jsonb_array_elements_text(l.details -> 'source_reference_ids') AS ref (id)
    LEFT JOIN graph_objects s
      ON s.object_type = 'source_reference' AND s.object_id = ref.id
     AND s.result_id = l.result_id
    GROUP BY l.result_id, l.object_id
),
resolved AS (
    SELECT l.*, c.source_type, c.source_version, c.lo, c.hi,
           coalesce(c.found = c.named AND c.versions = 1 AND c.source_type <> ''
                    AND c.source_id <> '' AND c.source_version ~ '^[0-9]+$', false)
               AS one_version,
           coalesce(c.positioned, false) AS positioned,
           CASE WHEN c.source_type = 'message' THEN m.canonical_id ELSE rs.source_id END
               AS canonical_id,
           CASE WHEN c.source_type = 'message' THEN m.project_id ELSE rs.project_id END
               AS source_project,
           coalesce((c.source_type = 'message' AND m.canonical_id IS NOT NULL)
                    OR (c.source_type <> 'message' AND rs.source_id IS NOT NULL), false)
               AS source_found
    FROM leaf l
    JOIN cited c ON c.result_id = l.result_id AND c.object_id = l.object_id
    LEFT JOIN LATERAL (
        SELECT v.source_id::text AS canonical_id, t.project_id
        FROM source_revisions n
        JOIN source_revisions v
          ON v.source_id = n.source_id
         AND v.revision = CASE WHEN c.source_version ~ '^[0-9]{1,18}$'
                               THEN c.source_version::bigint END
        JOIN trees t ON t.id = v.tree_id
        WHERE c.source_type = 'message'
          AND n.node_id = CASE WHEN c.source_id ~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$'
                               THEN c.source_id::uuid END
        LIMIT 1
    ) m ON true
    LEFT JOIN sources rs
      ON c.source_type <> 'message' AND rs.source_id = c.source_id
     AND rs.source_type = c.source_type AND NOT rs.deleted
)
SELECT r.*,
       CASE
           WHEN NOT r.one_version THEN 'cites no single source version it names'
           WHEN NOT r.positioned THEN 'the position of a cited fragment is unknown'
           WHEN NOT r.source_found THEN 'the source (or that message revision) is not stored'
           WHEN r.scope_key <> 'global'
                AND NOT coalesce(r.source_project = any(r.scope_projects), false)
               THEN 'the source belongs to a project outside the leaf''s scope'
       END AS separate_because,
       sha256(convert_to(r.body, 'UTF8')) AS text_hash
FROM resolved r;

-- One shared leaf per exact key, pointing at its earliest copy.
INSERT INTO leaves (source_type, source_id, source_version, contract_version, analysis,
                    fragment, text, text_hash, source_project, confirmation_state,
                    event_time_start, event_time_end, event_time_precision, event_time_basis,
                    scope_key, result_id, object_id, recorded_at)
SELECT DISTINCT ON (source_type, canonical_id, source_version, lo, hi, text_hash)
       source_type, canonical_id, source_version, 'legacy', 1, int8range(lo, hi), body,
       text_hash, source_project, confirmation_state, event_time_start, event_time_end,
       event_time_precision, event_time_basis, scope_key, result_id, object_id, recorded_at
FROM legacy_leaf_keys
WHERE separate_because IS NULL
ORDER BY source_type, canonical_id, source_version, lo, hi, text_hash, graph_revision, object_id;

-- Every other copy is a use of its leaf (the earliest is the leaf itself); each keeps its own
-- object (`linked` is false).
INSERT INTO leaf_uses (scope_key, object_id, result_id, leaf_id, linked, about)
SELECT k.scope_key, k.object_id, k.result_id, l.leaf_id, false,
       coalesce(k.details -> 'about', '[]'::jsonb)
FROM legacy_leaf_keys k
JOIN leaves l
  ON l.source_type = k.source_type AND l.source_id = k.canonical_id
 AND l.source_version = k.source_version AND l.contract_version = 'legacy' AND l.analysis = 1
 AND l.fragment = int8range(k.lo, k.hi) AND l.text_hash = k.text_hash
WHERE k.separate_because IS NULL
  AND (k.result_id, k.object_id) <> (l.result_id, l.object_id);

INSERT INTO leaf_migration_report (outcome, reason, copies, leaves)
SELECT CASE WHEN scopes > 1 THEN 'linked' ELSE 'shared' END,
       CASE WHEN scopes > 1
            THEN 'exact-key copies in several scopes now share one leaf'
            ELSE 'one scope holds every copy; stored as a shared leaf' END,
       sum(copies), count(*)
FROM (
    SELECT count(*) AS copies, count(DISTINCT scope_key) AS scopes
    FROM legacy_leaf_keys WHERE separate_because IS NULL
    GROUP BY source_type, canonical_id, source_version, lo, hi, text_hash
) per_leaf
GROUP BY scopes > 1
UNION ALL
SELECT 'separate', separate_because, count(*), count(*)
FROM legacy_leaf_keys WHERE separate_because IS NOT NULL
GROUP BY separate_because
UNION ALL
SELECT 'separate', 'entities are never merged across scopes: same name is not same entity',
       count(*), count(DISTINCT object_id)
FROM graph_objects WHERE object_type = 'entity'
HAVING count(*) > 0;

DO $$
DECLARE
    line record;
BEGIN
    FOR line IN SELECT * FROM leaf_migration_report ORDER BY outcome, reason LOOP
        RAISE NOTICE 'leaf migration: % — % (% copies, % leaves)',
            line.outcome, line.reason, line.copies, line.leaves;
    END LOOP;
END
$$;
