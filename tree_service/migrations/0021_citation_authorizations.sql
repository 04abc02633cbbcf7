-- T12: cross-person citations need the cited tree owner's grant; revoking it turns every
-- citation made under it into a tombstone.

CREATE TABLE citation_authorizations (
    id         uuid PRIMARY KEY,
    tree_id    uuid        NOT NULL REFERENCES trees (id),
    grantor    text        NOT NULL,
    grantee    text        NOT NULL,
    redactions text[]      NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    revoked_at timestamptz,
    revoked_by text,
    CHECK ((revoked_at IS NULL) = (revoked_by IS NULL))
);

-- Each citation (a node's citation at a position) made under a grant, so that a revocation
-- finds them without scanning every node.
CREATE TABLE authorized_citations (
    authorization_id uuid    NOT NULL REFERENCES citation_authorizations (id),
    node_id          uuid    NOT NULL REFERENCES nodes (id),
    position         integer NOT NULL CHECK (position >= 0),
    PRIMARY KEY (authorization_id, node_id, position)
);
