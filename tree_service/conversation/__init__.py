"""The conversation (T2-T8): questions, answers, continuations, adoption, and the reads of trees,
nodes and paths."""
