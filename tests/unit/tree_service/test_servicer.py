"""TreeServicer composes the RPC groups; each group declares the stores it uses, and the
composition must build every one of them (a missing one would fail only at start-up)."""

from __future__ import annotations

import dataclasses

from tree_service.servicer import TreeServicer
from tree_service.stores import Stores

# What the composition hands the servicer besides the stores (tree_service.app.start).
PARTS = {"chunks", "refill"}


def test_every_store_a_group_declares_is_one_the_composition_builds():
    built = {field.name for field in dataclasses.fields(Stores)}
    assert set(TreeServicer.declared_stores()) - PARTS <= built


def test_the_groups_declare_what_they_use():
    """A group's store comes from its own annotation: the base declares only the primary."""
    declared = set(TreeServicer.declared_stores())
    assert {"primary", "nodes", "conversation", "buds", "chunks", "tasks"} <= declared
