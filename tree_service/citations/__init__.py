"""T12: citation anchors, cross-person authorizations and the reads of citations."""
