"""Canonicalization (T9, T10, T22): main-line versions, invitations and canon candidates."""
