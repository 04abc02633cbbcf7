"""Cost visibility (T20) and comparisons of candidate answers (T23)."""
