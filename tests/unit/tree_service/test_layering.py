"""tree_service's layering, held against the code's own imports (docs/architecture.md draws it).

From the bottom: the core (top-level modules: errors, domain, rules, convert, primary, …) imports
nothing above it; the node core (`nodes/`) imports the core; each aggregate package imports the
core, the node core, its own modules and the public modules of the aggregates DEPENDS_ON lists
for it, and only its RPC modules (`rpc.py`, `*_rpc.py`) import those; the composition (stores,
servicer, app, __main__) imports anything. No module imports another package's SQL
(`queries`, `*_queries`) or a private name (`_x`) of another module's package.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "tree_service"

CORE = frozenset(
    {
        "canon_projection",
        "commitments",
        "config",
        "convert",
        "domain",
        "errors",
        "gate",
        "migrate",
        "ownership",
        "paging",
        "primary",
        "rules",
        "servicing",
        "stored_responses",
        "user_content",
    }
)
NODES = "nodes"
COMPOSITION = frozenset({"__main__", "app", "replays", "servicer", "stores"})
# Which other aggregates each aggregate builds on (their public modules only); nothing else
# sideways, and no cycle.
DEPENDS_ON: dict[str, frozenset[str]] = {
    "access": frozenset(),
    "buds": frozenset({"conversation", "ingestion"}),
    "canon": frozenset({"citations", "conversation", "ingestion", "realms"}),
    "citations": frozenset(),
    "context_assembly": frozenset({"citations"}),
    "conversation": frozenset({"citations", "context_assembly", "costs"}),
    "costs": frozenset(),
    "ingestion": frozenset({"leaves"}),
    "leaves": frozenset(),
    "lifecycle": frozenset({"citations", "context_assembly", "conversation"}),
    "realms": frozenset({"buds", "tasks"}),
    "tasks": frozenset({"conversation", "costs"}),
}


@dataclass(frozen=True)
class Module:
    name: str  # dotted, e.g. tree_service.conversation.store
    path: Path

    @property
    def unit(self) -> str:
        """The package under tree_service (conversation, nodes, …) or the top-level module."""
        parts = self.name.split(".")
        return parts[1] if len(parts) > 1 else ""

    @property
    def leaf(self) -> str:
        return self.name.rsplit(".", 1)[-1]

    @property
    def is_rpc(self) -> bool:
        return self.leaf == "rpc" or self.leaf.endswith("_rpc")

    @property
    def is_sql(self) -> bool:
        return self.leaf == "queries" or self.leaf.endswith("_queries")


@dataclass(frozen=True)
class Import:
    module: Module  # the importing module
    target: str  # the dotted module imported (for `from a.b import c`: a.b.c when c is one)
    names: tuple[str, ...]  # the names taken from it
    line: int
    bound: str = ""  # the name it is bound to in the importing module (its alias, if any)


def modules() -> list[Module]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found.append(Module(".".join(parts), path))
    return found


MODULES = {m.name: m for m in modules()}


def imports(module: Module, source: str | None = None) -> Iterator[Import]:
    tree = ast.parse(source if source is not None else module.path.read_text(encoding="utf-8"))
    package = module.name if module.path.name == "__init__.py" else module.name.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("tree_service"):
                    yield Import(module, alias.name, (), node.lineno, alias.asname or "")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            if not base.startswith("tree_service"):
                continue
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                bound = alias.asname or alias.name
                if submodule in MODULES:  # `from tree_service.x import queries`
                    yield Import(module, submodule, (), node.lineno, bound)
                else:
                    yield Import(module, base, (alias.name,), node.lineno, bound)


def unit_of(dotted: str) -> str:
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else ""


def problem(found: Import) -> str | None:
    """Why the layering forbids `found`, or None."""
    source, target = found.module, MODULES.get(found.target)
    if target is None:
        return None  # tree_service itself (`from tree_service import x` resolves x above)
    here, there = source.unit, target.unit
    private = [n for n in found.names if n.startswith("_")]
    if here != there and private:
        return f"takes the private name(s) {', '.join(private)} of {target.name}"
    if here in COMPOSITION:
        return None
    if here == there:
        if target.is_rpc and not source.is_rpc:
            return f"{target.name} is the gRPC face of its package; only RPC modules import it"
        return None
    if there in COMPOSITION:
        return f"imports the composition module {target.name}"
    if target.is_sql:
        return f"imports {target.name}, the SQL of another package; use its store"
    if there in CORE:
        return None
    if here in CORE:
        return f"the core imports {target.name}, above it"
    if there == NODES:
        return None
    if here == NODES:
        return f"the node core imports {target.name}, above it"
    if target.is_rpc:
        return f"imports {target.name}, another package's gRPC face"
    if there not in DEPENDS_ON.get(here, frozenset()):
        return f"{here} does not build on {there} (DEPENDS_ON)"
    return None


def all_imports() -> list[Import]:
    return [found for module in MODULES.values() for found in imports(module)]


def test_every_module_is_placed_in_a_layer():
    units = {m.unit for m in MODULES.values() if m.unit}
    placed = CORE | COMPOSITION | {NODES} | DEPENDS_ON.keys()
    assert units <= placed, f"place {sorted(units - placed)} in a layer of this test and the docs"
    assert placed - {"__main__"} <= units | {"__main__"}, "a layer names a unit that is gone"


def test_no_import_runs_up_or_sideways_against_the_layering():
    refused = []
    for found in all_imports():
        why = problem(found)
        if why is not None:
            name = ".".join(found.names) or found.target
            refused.append(f"{found.module.path.relative_to(ROOT)}:{found.line}: {name}: {why}")
    assert not refused, "\n".join(refused)


def test_the_aggregates_build_on_each_other_without_a_cycle():
    seen: dict[str, str] = {}

    def visit(unit: str, path: tuple[str, ...]) -> None:
        if seen.get(unit) == "done":
            return
        assert unit not in path, f"cycle: {' -> '.join((*path, unit))}"
        for other in DEPENDS_ON[unit]:
            visit(other, (*path, unit))
        seen[unit] = "done"

    for unit in DEPENDS_ON:
        visit(unit, ())


def private_uses(module: Module, source: str) -> list[str]:
    """`name._private` in `source` (the text of `module`), where `name` is bound by an import
    from another package (a class, a module, or either under an alias)."""
    foreign = {
        found.bound
        for found in imports(module, source)
        if unit_of(found.target) != module.unit and found.bound
    }
    return [
        f"{node.lineno}: {node.value.id}.{node.attr}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in foreign
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
    ]


def test_no_module_calls_a_private_name_of_another_package():
    """`Store._helper(...)` across packages, where the name was imported from there."""
    refused = [
        f"{module.path.relative_to(ROOT)}:{use}"
        for module in MODULES.values()
        for use in private_uses(module, module.path.read_text(encoding="utf-8"))
    ]
    assert not refused, "\n".join(refused)


@pytest.mark.parametrize(
    ("source", "use"),
    [
        (
            "from tree_service.conversation.store import ConversationStore\nConversationStore._x()",
            "ConversationStore._x",
        ),
        ("from tree_service import rules as tree_rules\ntree_rules._x()", "tree_rules._x"),
        ("from tree_service.conversation import store as conv\nconv._x()", "conv._x"),
    ],
)
def test_a_private_name_is_found_however_it_was_imported(source, use):
    assert private_uses(MODULES["tree_service.tasks.store"], source) == [f"2: {use}"]


@pytest.mark.parametrize(
    ("importer", "imported", "names", "expected"),
    [
        ("tree_service.rules", "tree_service.citations.anchors", (), "the core imports"),
        ("tree_service.nodes.store", "tree_service.conversation.store", (), "the node core"),
        ("tree_service.costs.compare", "tree_service.conversation.store", (), "does not build"),
        ("tree_service.tasks.store", "tree_service.nodes.queries", (), "SQL of another"),
        ("tree_service.tasks.store", "tree_service.conversation.store", ("_x",), "private"),
        ("tree_service.tasks.store", "tree_service.tasks.rpc", (), "gRPC face"),
        ("tree_service.tasks.store", "tree_service.stores", (), "composition"),
        ("tree_service.tasks.rpc", "tree_service.servicing", (), None),
        ("tree_service.servicing", "tree_service.stores", (), "composition"),
        ("tree_service.tasks.store", "tree_service.costs.charges", (), None),
    ],
)
def test_the_rule_refuses_what_the_layering_forbids(importer, imported, names, expected):
    """The checks above can fail: each kind of forbidden import is named as such."""
    why = problem(Import(MODULES[importer], imported, names, 1))
    if expected is None:
        assert why is None
    else:
        assert why is not None and expected in why
