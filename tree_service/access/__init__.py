"""Access: the switches gating the story-graph tools, session context and bindings."""
