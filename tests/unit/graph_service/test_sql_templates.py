"""The committed `.sql` files are what their templates render (scripts/gen_sql.py): a template
edited without `make sql`, a generated file edited by hand, or a generated file left behind
by a template that is gone fails here. No database."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]


def gen_sql() -> ModuleType:
    """scripts/gen_sql.py, which is a script rather than a package module."""
    spec = importlib.util.spec_from_file_location("gen_sql", ROOT / "scripts" / "gen_sql.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def copy_of_the_generated_files(gen: ModuleType, root: Path) -> None:
    for path in gen.committed(ROOT):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / path, root / path)


def test_every_generated_sql_file_is_its_templates_rendering():
    assert gen_sql().drift() == []


def test_a_generated_file_edited_by_hand_is_named(tmp_path: Path):
    gen = gen_sql()
    copy_of_the_generated_files(gen, tmp_path)
    edited = gen.GRAPH_SQL / "search_walk_tier2.sql"
    text = (tmp_path / edited).read_text(encoding="utf-8")
    (tmp_path / edited).write_text(text.replace("LIMIT $10", "LIMIT $10 + 1"), encoding="utf-8")

    assert gen.drift(tmp_path) == [f"{edited}: differs from its template's rendering"]


def test_a_generated_file_no_template_renders_and_a_missing_one_are_named(tmp_path: Path):
    gen = gen_sql()
    copy_of_the_generated_files(gen, tmp_path)
    stale = gen.MIRRORTREE_SQL / "related_members.sql"
    (tmp_path / stale).write_text("SELECT 1\n", encoding="utf-8")
    missing = gen.GRAPH_SQL / "hub_self.sql"
    (tmp_path / missing).unlink()

    assert gen.drift(tmp_path) == [
        f"{missing}: missing",
        f"{stale}: no template renders it",
    ]
