"""SQL of the graph service (read-only, on replicas), one module per read.

Each statement is complete as written, with $n parameters: a short one is a constant in its
read's module, a long one a file in sql/ loaded by name at import. A variant (a tier, a time
basis, a hub read's combination of pages) is a statement of its own.
"""

from pathlib import Path

_SQL = Path(__file__).parent / "sql"


def load(name: str) -> str:
    """The statement in sql/<name>.sql, without the comment lines that open the file."""
    lines = (_SQL / f"{name}.sql").read_text(encoding="utf-8").splitlines(keepends=True)
    while lines and lines[0].startswith("--"):
        lines.pop(0)
    return "".join(lines)
