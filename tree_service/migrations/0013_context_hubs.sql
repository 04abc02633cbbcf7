-- Hubs: objects with so many links that walking their neighbourhood live costs more than a
-- context read may take. tree_service keeps each hub's member copies (what graph_service's
-- live walk would return, see mirrortree/neighbourhoods.py) as review results add them.
CREATE TABLE context_hubs (
    scope_key   text NOT NULL,
    object_type text NOT NULL,
    object_id   text NOT NULL,
    PRIMARY KEY (scope_key, object_type, object_id)
);

-- One row per hub and member copy.
CREATE TABLE context_members (
    scope_key            text        NOT NULL,
    anchor_type          text        NOT NULL,
    anchor_id            text        NOT NULL,
    object_type          text        NOT NULL,
    object_id            text        NOT NULL,
    result_id            text        NOT NULL,
    type_rank            smallint    NOT NULL,
    kind                 text,
    event_time_start     timestamptz,
    event_time_end       timestamptz,
    event_time_precision text,
    review_generated_at  timestamptz NOT NULL,
    recorded_at          timestamptz NOT NULL,
    cited_ids            text[]      NOT NULL
);

-- Its only index, unique per hub and copy (an object id and a result id name a copy; the
-- other key columns are the copy's): a hub's members are one range of it, in evidence order
-- per type — event time (unknown last, all unknowns equal), type rank, stable id, result id,
-- text by code point — with the rest of their columns riding along. A first page of a
-- thousand events is then the first entries of the range for that type, read index-only,
-- not a sort of all of them (graph_service.context.StoredNeighbourhood).
CREATE UNIQUE INDEX context_members_evidence_order ON context_members (
    scope_key, anchor_type, anchor_id, object_type,
    (event_time_start IS NULL),
    (coalesce(event_time_start, '0001-01-02 00:00:00+00'::timestamptz)),
    type_rank, object_id COLLATE "C", result_id COLLATE "C"
) INCLUDE (kind, event_time_start, event_time_end, event_time_precision, review_generated_at,
           recorded_at, cited_ids);

-- The lowest threshold (links per object) hubs have been made at, across the database: a
-- tree_service started with a lower one makes the objects in between hubs, in the background.
CREATE TABLE context_hub_threshold (
    single    boolean PRIMARY KEY DEFAULT true CHECK (single),
    hub_links integer NOT NULL
);
