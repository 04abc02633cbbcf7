"""docs/limits.md holds the values the code enforces: each row naming a constant (or a
settings default) in its `where` column shows that constant's value."""

from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path

import pytest

LIMITS = Path(__file__).resolve().parents[2] / "docs" / "limits.md"
_NAMED = re.compile(r"`([a-z_]+(?:\.[a-z_]+)+\.(?:[A-Z_]+|Settings\.[a-z_]+))`")


def rows() -> list[tuple[str, str, str]]:
    found = []
    for line in LIMITS.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and (named := _NAMED.search(cells[2])):
            found.append((cells[0], cells[1], named.group(1)))
    return found


def value_of(path: str) -> int:
    if ".Settings." in path:
        module, _, attribute = path.partition(".Settings.")
        settings = importlib.import_module(module).Settings
        default = {f.name: f.default for f in dataclasses.fields(settings)}[attribute]
        assert isinstance(default, int), path
        return default
    module, _, name = path.rpartition(".")
    return int(getattr(importlib.import_module(module), name))


def test_the_table_names_the_constants_it_documents():
    assert len(rows()) >= 30


@pytest.mark.parametrize(("limit", "shown", "path"), rows(), ids=[r[0] for r in rows()])
def test_each_documented_limit_is_the_enforced_one(limit, shown, path):
    number = int(re.sub(r"[^\d]", "", shown.split()[0]))
    assert number == value_of(path), f"{limit}: docs say {shown}, {path} is {value_of(path)}"
