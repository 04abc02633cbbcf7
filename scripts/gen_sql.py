"""Render the SQL templates into the statement files the services load.

graph_service's long statements, and the parts of mirrortree.neighbourhoods that a context read
repeats, are written once, as Jinja2 templates in `graph_service/queries/templates/` (a file
whose name starts with `_` holds parts the others import). Each is rendered into complete `.sql`
files that are committed and loaded as they are: nothing is rendered at run time, and a variant
(a tier, a time basis, a hub read's parts) stays a statement of its own, readable as PostgreSQL
receives it. `--check` renders in memory and fails, naming the files, when a committed file
differs from its template's rendering or when a generated folder holds a file that no template
renders, so CI catches a template edited without regenerating, or a generated file edited.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

import jinja2

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = Path("graph_service") / "queries" / "templates"
GRAPH_SQL = Path("graph_service") / "queries" / "sql"
MIRRORTREE_SQL = Path("mirrortree") / "sql"
# Every `.sql` file in these folders is rendered from a template: a template in TEMPLATES
# renders into GRAPH_SQL, one in its `mirrortree/` folder into MIRRORTREE_SQL.
GENERATED = {TEMPLATES: GRAPH_SQL, TEMPLATES / "mirrortree": MIRRORTREE_SQL}
SUFFIX = ".sql.j2"

TIERS = (3, 2, 1)
TIME_BASES = ("event_time", "review_generated_at", "recorded_at")
# A family's template is rendered once per variant, into a file named by its pattern filled with
# the variant's values; any other template is rendered once, into a file of its own name.
FAMILIES: Mapping[str, tuple[str, list[dict[str, object]]]] = {
    "search_walk": ("search_walk_tier{tier}", [{"tier": t} for t in TIERS]),
    "search_range_walk": ("search_range_walk_tier{tier}", [{"tier": t} for t in TIERS]),
    "search_scan": ("search_scan_tier{tier}", [{"tier": t} for t in TIERS]),
    "search_range": (
        "search_range_{read}_{basis}",
        [
            {"read": read, "basis": basis}
            for read in ("read", "count", "matches", "day_matches")
            for basis in TIME_BASES
        ],
    ),
}


class Output(NamedTuple):
    """A generated file (relative to the repository) and how it is rendered."""

    path: Path
    template: Path
    values: Mapping[str, object]


def parameters(first: int, count: int) -> list[str]:
    """`count` placeholders from `$first` on: the parameters of a part of a statement, which
    follow those of the parts before it."""
    return [f"${n}" for n in range(first, first + count)]


def outputs() -> list[Output]:
    """Every generated file: a family's once per variant, any other template's once."""
    found = []
    for folder, out in GENERATED.items():
        for template in sorted((ROOT / folder).glob(f"[!_]*{SUFFIX}")):
            name = template.name.removesuffix(SUFFIX)
            source = folder / template.name
            if name in FAMILIES and folder == TEMPLATES:
                pattern, variants = FAMILIES[name]
                found += [
                    Output(out / f"{pattern.format(**values)}.sql", source, values)
                    for values in variants
                ]
            else:
                found.append(Output(out / f"{name}.sql", source, {}))
    return found


# How a generated file begins, so that a reader knows not to edit it and `make sql` knows which
# files it may remove.
GENERATED_FROM = "-- Generated from "


def header(template: Path) -> str:
    return f"{GENERATED_FROM}{template.as_posix()} by scripts/gen_sql.py; do not edit by hand.\n"


def render() -> dict[Path, str]:
    """Every generated file's text, by its path relative to the repository."""
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(ROOT / TEMPLATES),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.globals["parameters"] = parameters
    return {
        output.path: header(output.template)
        + environment.get_template(output.template.relative_to(TEMPLATES).as_posix()).render(
            output.values
        )
        for output in outputs()
    }


def committed(root: Path) -> list[Path]:
    """The `.sql` files in the generated folders under `root`, relative to it."""
    return sorted(
        path.relative_to(root)
        for folder in GENERATED.values()
        for path in (root / folder).glob("*.sql")
    )


def drift(root: Path = ROOT) -> list[str]:
    """What keeps the generated folders under `root` from being the templates' renderings:
    one line per file, empty when they are."""
    rendered = render()
    problems = [f"{path}: missing" for path in rendered if not (root / path).exists()]
    for path in committed(root):
        if path not in rendered:
            problems.append(f"{path}: no template renders it")
        elif (root / path).read_text(encoding="utf-8") != rendered[path]:
            problems.append(f"{path}: differs from its template's rendering")
    return sorted(problems)


def write() -> list[str]:
    """Write every rendering and remove the generated files no template renders any more; a
    file no template renders and that was not generated is left, and reported."""
    rendered = render()
    refused = []
    for path in committed(ROOT):
        if path not in rendered:
            if (ROOT / path).read_text(encoding="utf-8").startswith(GENERATED_FROM):
                (ROOT / path).unlink()
            else:
                refused.append(f"{path}: not generated; write it as a template in {TEMPLATES}")
    for path, text in rendered.items():
        (ROOT / path).parent.mkdir(parents=True, exist_ok=True)
        (ROOT / path).write_text(text, encoding="utf-8")
    return refused


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if committed files are stale")
    opts = parser.parse_args()
    if not opts.check:
        refused = write()
        if refused:
            print("left alone:", *refused, sep="\n  ")
        return 1 if refused else 0
    problems = drift()
    if problems:
        print("generated SQL is out of date; run `make sql`:", *problems, sep="\n  ")
        return 1
    print("generated SQL is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
