"""The user-content registry says what purge and revocation do to each column; their statements
must do it, no more and no less: a column the registry says a purge clears, tombstones or
retracts is set by a purge statement, one it deletes has its rows deleted, and one it says a
purge does not reach is written by none (else the registry is out of date). Where a purge
reaches only part of a column (PARTLY), the registry names what survives."""

from __future__ import annotations

import re

import pytest

from mirrortree.v1 import purge_pb2
from tree_service.citations import queries as citation_queries
from tree_service.lifecycle import purge_queries
from tree_service.user_content import CONTENT, CONTENT_FREE, Purge, Revoke

WRITTEN = (Purge.CLEARED, Purge.TOMBSTONED, Purge.RETRACTED, Purge.PARTLY)


def statements(module: object) -> list[str]:
    return [v for k, v in vars(module).items() if k.isupper() and isinstance(v, str)]


def sets(sql: list[str], table: str, column: str) -> bool:
    """Whether one of the statements updates `table`, setting `column`."""
    update = re.compile(rf"UPDATE {table}\b.*?\bSET\b(.*?)(?:\bWHERE\b|\bRETURNING\b|$)", re.S)
    return any(
        re.search(rf"\b{column}\s*=", found.group(1))
        for statement in sql
        for found in update.finditer(statement)
    )


def deletes(sql: list[str], table: str) -> bool:
    return any(re.search(rf"DELETE FROM {table}\b", statement) for statement in sql)


PURGE = statements(purge_queries)
REVOKE = statements(citation_queries)


@pytest.mark.parametrize("column", sorted(CONTENT), ids="{0[0]}.{0[1]}".format)
def test_a_purge_does_to_each_column_what_the_registry_says(column):
    table, name = column
    entry = CONTENT[column]
    if entry.purge in WRITTEN:
        assert sets(PURGE, table, name), f"no purge statement sets {table}.{name}"
    elif entry.purge is Purge.DELETED:
        assert deletes(PURGE, table), f"no purge statement deletes from {table}"
    elif entry.purge is Purge.NOT_REACHED:
        assert not sets(PURGE, table, name), f"a purge sets {table}.{name}: update the registry"


@pytest.mark.parametrize("column", sorted(CONTENT), ids="{0[0]}.{0[1]}".format)
def test_a_revocation_does_to_each_column_what_the_registry_says(column):
    table, name = column
    written = sets(REVOKE, table, name)
    assert written == (CONTENT[column].revoke is Revoke.TOMBSTONED), f"{table}.{name}"
    if CONTENT[column].revoke is Revoke.DELETED:
        assert deletes(REVOKE, table), f"no revocation statement deletes from {table}"


def test_a_copy_a_purge_may_keep_names_the_choice_that_forgets_it():
    fields = set(purge_pb2.PurgeChoice.DESCRIPTOR.fields_by_name)
    chosen = {entry.choice for entry in CONTENT.values() if entry.choice}
    assert chosen <= fields, chosen - fields
    # every choice over words governs some copy (merge references hold none; copies are nodes)
    assert fields - {"transplant_copies", "merge_references"} <= chosen, fields - chosen


def test_the_statement_check_tells_a_set_column_from_another():
    assert sets(["UPDATE nodes SET text = '' WHERE id = $1"], "nodes", "text")
    assert not sets(["UPDATE nodes SET text = '' WHERE title = $1"], "nodes", "title")
    assert not sets(["UPDATE leaves SET text = ''"], "nodes", "text")


def test_a_copy_forgetting_does_not_reach_names_its_gap():
    for column, entry in CONTENT.items():
        not_reached = entry.purge in (Purge.PARTLY, Purge.NOT_REACHED) or (
            entry.revoke is Revoke.NOT_REACHED
        )
        assert bool(entry.gap) == not_reached, column
        assert entry.holds, column
    for column, why in CONTENT_FREE.items():
        assert why, column
