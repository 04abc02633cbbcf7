"""The conversation tree: trees, questions, answers, continuations, adoption, main lines."""
