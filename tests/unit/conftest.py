"""The unit tier: tests of the rules, registries, contracts and generated files that need no
PostgreSQL and start no service process (`make test-unit` runs them alone, in seconds). A test
here that asks for the database fails at collection: it belongs beside the tests of the SQL."""

from __future__ import annotations

from pathlib import Path

import pytest

UNIT = Path(__file__).resolve().parent
# Fixtures that start PostgreSQL (tests/conftest.py) or need it.
DATABASE_FIXTURES = frozenset({"cluster_config", "cluster", "tree_service", "graph_service", "db"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if UNIT not in Path(str(item.path)).resolve().parents:
            continue
        wanted = DATABASE_FIXTURES & set(getattr(item, "fixturenames", ()))
        if wanted:
            raise pytest.UsageError(
                f"{item.nodeid} uses {sorted(wanted)}: a unit test needs no database; move it "
                "out of tests/unit"
            )
