"""The conversation (T2-T8): questions, answers, continuations, adoption, and the RPCs that read
trees, nodes and paths (through the node core)."""
