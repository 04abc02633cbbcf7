"""SQL of the graph service (read-only, on replicas), one module per read.

Each statement is complete as written, with $n parameters: a short one is a constant in its
read's module, a long one a file in sql/ loaded by name at import. A variant (a tier, a time
basis, a hub read's combination of pages) is a statement of its own. The files in sql/ are
rendered from the templates in templates/ (`make sql`, scripts/gen_sql.py), where each part
that several statements share is written once: edit a template, never a file in sql/.
"""

from pathlib import Path

from mirrortree.sqlfiles import read_statement

_SQL = Path(__file__).parent / "sql"


def load(name: str) -> str:
    """The statement in sql/<name>.sql, without the comment lines that open the file."""
    return read_statement(_SQL / f"{name}.sql")
