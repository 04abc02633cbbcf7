"""Reading the statements the services keep as `.sql` files (rendered from templates by
scripts/gen_sql.py), without the comment lines that open each file."""

from pathlib import Path


def read_statement(path: Path) -> str:
    """The SQL in `path`, without the comment lines that open the file."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    while lines and lines[0].startswith("--"):
        lines.pop(0)
    return "".join(lines)
