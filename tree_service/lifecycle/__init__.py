"""The lifecycle of a branch (T13-T16): its states and their transitions, merges by reference,
transplants, and purges."""
