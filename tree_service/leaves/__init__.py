"""Leaf facts extracted once and reused by every scope (DESIGN G9)."""
