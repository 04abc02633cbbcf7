-- How many stored members and citations each hub has, by kind: kept with context_members and
-- context_citations (see mirrortree/neighbourhoods.py). A hub's first context read reports
-- every collection's total; counting them from the members' index read every entry of the
-- hub's range — 1,200 events and as many citations, about 80 index pages — where the page
-- itself reads a dozen entries. Totals of a read without a time filter come from here.
--   role         'member': stored members (context_members) of this object type, with or
--                without an event time (undated);
--                'cited': citations (context_citations), each a source reference's copy
--                with no event time (object_type 'source_reference', undated true)
CREATE TABLE context_counts (
    scope_key   text    NOT NULL,
    anchor_type text    NOT NULL,
    anchor_id   text    NOT NULL,
    role        text    NOT NULL CHECK (role IN ('member', 'cited')),
    object_type text    NOT NULL,
    undated     boolean NOT NULL,
    copies      bigint  NOT NULL CHECK (copies > 0),
    PRIMARY KEY (scope_key, anchor_type, anchor_id, role, object_type, undated)
);

-- The hubs made before this table.
INSERT INTO context_counts
SELECT scope_key, anchor_type, anchor_id, 'member', object_type, event_time_start IS NULL,
       count(*)
FROM context_members
GROUP BY scope_key, anchor_type, anchor_id, object_type, event_time_start IS NULL
UNION ALL
SELECT scope_key, anchor_type, anchor_id, 'cited', 'source_reference', true, count(*)
FROM context_citations
GROUP BY scope_key, anchor_type, anchor_id;

-- A hub's newest related decisions (the current projection lists the first 20 by stable id,
-- the newest copy of each): one ordered range of a hub's decisions, instead of every event
-- member of the hub filtered by kind and sorted.
CREATE INDEX context_members_decisions ON context_members (
    scope_key, anchor_type, anchor_id, object_id COLLATE "C", review_generated_at DESC,
    recorded_at DESC
) INCLUDE (object_type, result_id, type_rank, kind, event_time_start, event_time_end,
           event_time_precision)
WHERE object_type = 'event' AND kind = 'decision';

-- The entity changes that may record an object being carried out (every context read checks
-- them): their links alone, instead of every link into the object filtered by type — a
-- thousand for an entity many events mention.
CREATE INDEX graph_links_changes ON graph_links (scope_key, to_type, to_id)
    INCLUDE (from_id, result_id)
    WHERE from_type = 'entity_change' AND link IN ('during', 'changes');

-- Which of those changes record it carried out: a probe per linked change into the completed
-- changes alone (a few hundred kB at a million objects, always in memory), instead of into the
-- index of every copy.
CREATE INDEX graph_objects_completed_changes ON graph_objects (object_id, result_id)
    WHERE object_type = 'entity_change' AND kind = 'completed';
