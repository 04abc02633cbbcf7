"""The lifecycle of a mirror tree: answer lifecycle states and branch states (T13, T22)."""
