"""Realms and what leaves the conversation: arbiter rulings, real-world actions, commitments."""
