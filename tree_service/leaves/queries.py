"""SQL of shared leaves: the sources behind them, extraction coverage, leaves and their uses."""

# Message versions ($1 ids, $2 revisions), each named by any node id of its lineage or by the
# lineage (source) id: the lineage id is the canonical source id; the project is the
# conversation's.
MESSAGE_VERSIONS = """
SELECT w.i, v.source_id::text AS canonical_id, t.project_id, char_length(v.text) AS length
FROM unnest($1::uuid[], $2::bigint[]) WITH ORDINALITY AS w (id, revision, i)
CROSS JOIN LATERAL (
    SELECT coalesce(
        (SELECT n.source_id FROM source_revisions n WHERE n.node_id = w.id LIMIT 1),
        (SELECT s.source_id FROM source_revisions s WHERE s.source_id = w.id LIMIT 1))
        AS lineage
) x
JOIN source_revisions v ON v.source_id = x.lineage AND v.revision = w.revision
JOIN trees t ON t.id = v.tree_id
"""

# A recorded source as it is now (only its current revision's text is kept).
RECORDED_SOURCE = """
SELECT project_id, revision, char_length(text) AS length, deleted
FROM sources WHERE source_id = $1 AND source_type = $2
"""

# Held to the end of the transaction: extractions of one source version commit in turn, so
# two scopes ingesting the same leaves at once link instead of storing both.
# Taken in sorted order, so that two extractions of overlapping sources cannot deadlock.
LOCK_SOURCE_VERSIONS = """
SELECT pg_advisory_xact_lock(hashtextextended(k.key, 32))
FROM (SELECT key FROM unnest($1::text[]) AS key ORDER BY key) k
"""

# The newest analysis of each source version under contract $5 ($1..$3 keys; 0 = none), from
# extractions and leaves alike (migrated leaves have no recorded extraction).
NEWEST_ANALYSES = """
SELECT k.i,
       greatest(
           (SELECT max(e.analysis) FROM leaf_extractions e
            WHERE e.source_type = k.source_type AND e.source_id = k.source_id
              AND e.source_version = k.source_version AND e.contract_version = $4),
           (SELECT max(l.analysis) FROM leaves l
            WHERE l.source_type = k.source_type AND l.source_id = k.source_id
              AND l.source_version = k.source_version AND l.contract_version = $4),
           0) AS analysis
FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY
     AS k (source_type, source_id, source_version, i)
"""

# The ranges extracted of each source version ($1..$3) under contract $4, in the analysis
# $5 gives it (NULL = any analysis).
EXTRACTED_RANGES = """
SELECT k.i, lower(e.covered) AS start, upper(e.covered) AS "end"
FROM unnest($1::text[], $2::text[], $3::text[], $5::integer[]) WITH ORDINALITY
     AS k (source_type, source_id, source_version, analysis, i)
JOIN leaf_extractions e
  ON e.source_type = k.source_type AND e.source_id = k.source_id
 AND e.source_version = k.source_version AND e.contract_version = $4
 AND (k.analysis IS NULL OR e.analysis = k.analysis)
"""

# Stored leaves of each source version ($1..$3) under contract $4 in the ranges $5/$6, counted.
LEAVES_IN_RANGE = """
SELECT k.i, count(l.leaf_id) AS leaves
FROM unnest($1::text[], $2::text[], $3::text[], $5::bigint[], $6::bigint[]) WITH ORDINALITY
     AS k (source_type, source_id, source_version, lo, hi, i)
LEFT JOIN leaves l
  ON l.source_type = k.source_type AND l.source_id = k.source_id
 AND l.source_version = k.source_version AND l.contract_version = $4
 AND l.fragment <@ int8range(k.lo, k.hi)
GROUP BY k.i
"""

# The stored leaf matching each key exactly (source, version, contract $1, analysis, range,
# text digest).
MATCHING_LEAVES = """
SELECT w.i, l.leaf_id
FROM unnest($2::text[], $3::text[], $4::text[], $5::integer[], $6::bigint[], $7::bigint[],
            $8::bytea[]) WITH ORDINALITY
     AS w (source_type, source_id, source_version, analysis, lo, hi, text_hash, i)
JOIN leaves l
  ON l.source_type = w.source_type AND l.source_id = w.source_id
 AND l.source_version = w.source_version AND l.contract_version = $1
 AND l.analysis = w.analysis AND l.fragment = int8range(w.lo, w.hi)
 AND l.text_hash = w.text_hash
"""

INSERT_LEAVES = """
INSERT INTO leaves (source_type, source_id, source_version, contract_version, analysis,
                    fragment, text, text_hash, source_project, confirmation_state,
                    event_time_start, event_time_end, event_time_precision, event_time_basis,
                    scope_key, result_id, object_id, recorded_at)
SELECT w.source_type, w.source_id, w.source_version, $1, w.analysis, int8range(w.lo, w.hi),
       w.text, w.text_hash, w.source_project, w.confirmation_state, w.event_time_start,
       w.event_time_end, w.event_time_precision, w.event_time_basis, $2, $3, w.object_id, $4
FROM unnest($5::text[], $6::text[], $7::text[], $8::integer[], $9::bigint[], $10::bigint[],
            $11::text[], $12::bytea[], $13::text[], $14::text[], $15::timestamptz[],
            $16::timestamptz[], $17::text[], $18::text[], $19::text[])
     AS w (source_type, source_id, source_version, analysis, lo, hi, text, text_hash,
           source_project, confirmation_state, event_time_start, event_time_end,
           event_time_precision, event_time_basis, object_id)
RETURNING leaf_id, object_id
"""

LEAF_USE_COLUMNS = ("scope_key", "object_id", "result_id", "leaf_id", "linked", "about")

EXTRACTION_COLUMNS = (
    "source_type",
    "source_id",
    "source_version",
    "contract_version",
    "analysis",
    "covered",
    "scope_key",
    "result_id",
    "recorded_at",
)

# Leaf facts a scope linked rather than stored ($1 scope, $2 ids), newest use first, so that a
# later result of the scope may name them as it names its stored objects.
LINKED_LEAVES_IN_SCOPE = """
SELECT DISTINCT ON (u.object_id) u.object_id, u.result_id
FROM leaf_uses u JOIN review_results r ON r.result_id = u.result_id
WHERE u.scope_key = $1 AND u.object_id = any($2::text[])
ORDER BY u.object_id, r.graph_revision DESC
"""
