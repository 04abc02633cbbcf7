"""The user-content registry (tree_service/user_content.py) held against the catalog: every
column that could hold someone's words says what forgetting does to it, or why it cannot."""

from __future__ import annotations

from tree_service import user_content

# Types a user's words can be stored in: text of any kind, JSON, bytes, and arrays of them.
WORDS = """
SELECT c.table_name, c.column_name, c.data_type, c.udt_name
FROM information_schema.columns c
JOIN information_schema.tables t USING (table_schema, table_name)
WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
  AND (c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'bytea')
       OR c.data_type = 'ARRAY')
ORDER BY 1, 2
"""


async def test_every_column_that_could_hold_words_is_registered_once(tree_service, db):
    columns = {(r["table_name"], r["column_name"]) for r in await db.fetch(WORDS)}
    assert ("nodes", "text") in columns  # the catalog was read, migrated
    content, free = user_content.CONTENT.keys(), user_content.CONTENT_FREE.keys()
    unregistered = sorted(columns - content - free)
    assert not unregistered, (
        "say what purge and revocation do to each (user_content.CONTENT) or why it holds no "
        f"one's words (CONTENT_FREE): {unregistered}"
    )
    assert not content & free
    assert not (content | free) - columns, "an entry names a column that is gone"


async def test_where_words_sit_inside_a_column_is_said_only_for_json_and_bytes(tree_service, db):
    types = {(r["table_name"], r["column_name"]): r["data_type"] for r in await db.fetch(WORDS)}
    for column, entry in user_content.CONTENT.items():
        if types[column] in ("jsonb", "json", "bytea"):
            assert entry.paths, f"{column}: which paths of it hold the words?"
        else:
            assert not entry.paths, f"{column} is {types[column]}: it has no paths"
