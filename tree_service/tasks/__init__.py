"""Delegated tasks (T19) and the tree's event stream (WatchTree)."""
