-- A streaming bud is held by a lease that its live stream keeps renewing. If the process that
-- serves the stream dies, the lease runs out and any tree_service instance freezes the bud
-- (stop reason "server_lost"), so no bud stays streaming for ever.

ALTER TABLE nodes ADD COLUMN stream_lease_until timestamptz;

CREATE INDEX nodes_streaming_leases ON nodes (stream_lease_until) WHERE answer_state = 'streaming';
