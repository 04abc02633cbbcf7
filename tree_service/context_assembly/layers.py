"""T11 as plain functions: which items a node's context holds and how each fits the budget.

A context holds the node's ancestor path, the approved long-term memory of its project (its
confirmed preferences, and the facts in effect that hold for the node) and its explicit
citations; never a sibling branch. The mandatory part (hard boundaries, the current
node, the direct parent chain, the node's own citations) goes in verbatim or not at all: when
it alone exceeds the budget, ContextOverBudget names each of its items. The rest is compressed
in layers, lowest priority first, each layer only as far as needed (seed 001 §4): attachments
come as the fragments the caller retrieved; side-branch citations, tool results and older
ancestors (oldest first) are replaced by their latest caller-written summary when it is
shorter; then items are omitted: side-branch citations, tool results, older ancestors, then
attachment fragments, memory last. Nothing here reads a clock or
a random source, so the same inputs always give the same items.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from tree_service.citations.anchors import citation_subject
from tree_service.commitments import KIND_LABELS, CommitmentKind
from tree_service.domain import Node
from tree_service.errors import PreconditionFailed

MAX_BUDGET = 2_000_000
DEFAULT_PARENT_CHAIN = 2
MAX_LISTED = 12  # mandatory items named in an over-budget error (the rest are counted)
# Facts in effect one context holds: the newest, the rest counted in one omitted item. Only the
# newest MAX_FACT_STATEMENTS statements that could hold are read for one context.
MAX_FACTS = 100
MAX_FACT_STATEMENTS = 2_000
FACTS_LEFT_OUT = "facts:left-out"


class Layer(StrEnum):
    HARD_BOUNDARY = "hard_boundary"
    CURRENT_NODE = "current_node"
    PARENT_CHAIN = "parent_chain"
    EXPLICIT_ANCHOR = "explicit_anchor"
    LONG_TERM_MEMORY = "long_term_memory"
    OLDER_ANCESTOR = "older_ancestor"
    TOOL_RESULT = "tool_result"
    SIDE_BRANCH_CITATION = "side_branch_citation"
    ATTACHMENT = "attachment"


class Inclusion(StrEnum):
    VERBATIM = "verbatim"
    SUMMARY = "summary"
    FRAGMENT = "fragment"
    OMITTED = "omitted"


MANDATORY = (Layer.HARD_BOUNDARY, Layer.CURRENT_NODE, Layer.PARENT_CHAIN, Layer.EXPLICIT_ANCHOR)
# The order items are read in: background first, the current node last.
READING_ORDER = (
    Layer.HARD_BOUNDARY,
    Layer.LONG_TERM_MEMORY,
    Layer.OLDER_ANCESTOR,
    Layer.SIDE_BRANCH_CITATION,
    Layer.TOOL_RESULT,
    Layer.ATTACHMENT,
    Layer.PARENT_CHAIN,
    Layer.EXPLICIT_ANCHOR,
    Layer.CURRENT_NODE,
)
# Layers replaced by summaries, in the order they are compressed.
SUMMARIZED = (Layer.SIDE_BRANCH_CITATION, Layer.TOOL_RESULT, Layer.OLDER_ANCESTOR)
# Layers omitted when summaries are not enough, in the order they give way: retrieved
# fragments were chosen for this question, so they outlast the older conversation.
OMITTABLE = (
    Layer.SIDE_BRANCH_CITATION,
    Layer.TOOL_RESULT,
    Layer.OLDER_ANCESTOR,
    Layer.ATTACHMENT,
    Layer.LONG_TERM_MEMORY,
)


class ContextOverBudget(PreconditionFailed):
    """The mandatory part of a context alone exceeds the budget; nothing was recorded."""

    reason = "context_over_budget"


@dataclass(frozen=True)
class Summary:
    subject: str
    version: int
    text: str
    token_estimate: int


@dataclass(frozen=True)
class Fragment:
    node_id: str
    attachment_id: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Memory:
    preference_id: str
    subject: str
    text: str


@dataclass(frozen=True)
class Fact:
    """A fact, relationship, experience or authorization in effect that holds for the node
    (T18, T24; `commitments.holds_in`), stated at `node_id`; `scope` is where it took effect:
    `real`, or `world_canon:<world>`."""

    commitment_id: str
    node_id: str
    kind: CommitmentKind
    scope: str
    statement: str


@dataclass(frozen=True)
class Budget:
    code_points: int
    tokens: int = 0  # 0: no token budget
    estimates: Mapping[str, int] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class Item:
    subject: str
    layer: Layer
    inclusion: Inclusion
    text: str
    node_id: str = ""
    full_code_points: int = 0
    tokens: int = 0
    summary_version: int = 0
    fragment_start: int = 0
    fragment_end: int = 0
    omitted_reason: str = ""
    # Position in the reading order within the layer (root first, oldest first).
    rank: int = 0
    authorization_id: str = ""  # a cross-person citation's grant

    def __post_init__(self) -> None:
        if not self.full_code_points and self.text:  # as first built: its verbatim length
            object.__setattr__(self, "full_code_points", len(self.text))

    @property
    def code_points(self) -> int:
        return len(self.text)

    @property
    def mandatory(self) -> bool:
        return self.layer in MANDATORY


@dataclass(frozen=True)
class Assembled:
    items: tuple[Item, ...]
    used: int
    used_tokens: int
    digest: str
    stored: str = ""  # the items as recorded (JSON), when freshly assembled


def node_subject(node_id: str) -> str:
    return f"node:{node_id}"


def tool_subject(node_id: str, index: int) -> str:
    return f"tool:{node_id}:{index}"


def attachment_subject(node_id: str, attachment_id: str) -> str:
    return f"attachment:{node_id}:{attachment_id}"


def parse_subject(subject: str) -> tuple[str, str, int | None] | None:
    """(kind, node id, index) of a summarizable subject; None when it is not one."""
    parts = subject.split(":")
    if len(parts) == 2 and parts[0] == "node":
        return "node", parts[1], None
    if len(parts) == 3 and parts[0] in {"tool", "citation"} and parts[2].isdigit():
        return parts[0], parts[1], int(parts[2])
    return None


def citation_text(citation: Mapping[str, Any]) -> str:
    note = citation.get("note") or ""
    snapshot = str(citation.get("snapshot", ""))
    return f"{snapshot}\nnote: {note}" if note else snapshot


def tool_text(entry: Mapping[str, Any]) -> str:
    tool, given, result = (entry.get(k, "") for k in ("tool", "input_summary", "output_summary"))
    return f"{tool}: {given} → {result}"


def revoked(item: Item, citation: Mapping[str, Any]) -> Item:
    """A citation whose cross-person grant was revoked: a tombstone, never its content."""
    return dataclasses.replace(
        item,
        inclusion=Inclusion.OMITTED,
        text="",
        summary_version=0,
        omitted_reason=f"revoked: {citation.get('source_description', 'a cited source')}",
    )


def memory_subject(preference_id: str) -> str:
    """The subject of a confirmed preference's item in an assembled context."""
    return f"memory:{preference_id}"


def fact_subject(commitment_id: str) -> str:
    return f"fact:{commitment_id}"


def fact_text(fact: Fact) -> str:
    """A fact as a context reads it: what kind it is, where it is in effect, and the words."""
    world = fact.scope.removeprefix("world_canon:")
    where = "the real realm" if fact.scope == "real" else f"world {world!r}"
    return f"{KIND_LABELS[fact.kind]} in effect in {where}: {fact.statement}"


def fact_items(facts: Sequence[Fact], first_rank: int, unread: bool) -> list[Item]:
    """The memory items of the facts in effect (oldest first): the newest MAX_FACTS, and one
    omitted item counting the rest (and saying when older statements were not read)."""
    kept = facts[max(0, len(facts) - MAX_FACTS) :]
    items = [
        Item(
            fact_subject(f.commitment_id),
            Layer.LONG_TERM_MEMORY,
            Inclusion.VERBATIM,
            fact_text(f),
            node_id=f.node_id,
            rank=first_rank + i,
        )
        for i, f in enumerate(kept)
    ]
    left_out = len(facts) - len(kept)
    if left_out or unread:
        reason = (
            f"{left_out} older fact(s) in effect left out: a context holds the newest {MAX_FACTS}"
        )
        if unread:
            reason += (
                f"; only the newest {MAX_FACT_STATEMENTS} statements that could hold were read, "
                "so older facts in effect may be left out too"
            )
        items.append(
            Item(
                FACTS_LEFT_OUT,
                Layer.LONG_TERM_MEMORY,
                Inclusion.OMITTED,
                "",
                omitted_reason=reason,
                rank=first_rank + len(kept),
            )
        )
    return items


def candidates(
    path: Sequence[Node],
    boundaries: Sequence[str],
    memory: Sequence[Memory],
    fragments: Sequence[Fragment],
    parent_chain: int,
    *,
    facts: Sequence[Fact] = (),
    facts_unread: bool = False,
) -> list[Item]:
    """Every item the context may hold, verbatim, before any budget applies. `facts` are the
    facts in effect that hold for the node, oldest first; `facts_unread` says that older
    statements were not read (MAX_FACT_STATEMENTS)."""
    node = path[-1]
    ancestors = path[:-1]
    chain_start = max(0, len(ancestors) - parent_chain)
    items: list[Item] = [
        Item(f"boundary:{i}", Layer.HARD_BOUNDARY, Inclusion.VERBATIM, text, rank=i)
        for i, text in enumerate(boundaries)
    ]
    items += [
        Item(
            memory_subject(m.preference_id),
            Layer.LONG_TERM_MEMORY,
            Inclusion.VERBATIM,
            f"{m.subject}: {m.text}",
            rank=i,
        )
        for i, m in enumerate(memory)
    ]
    items += fact_items(facts, len(memory), facts_unread)
    by_node: dict[str, list[Fragment]] = {}
    for fragment in fragments:
        by_node.setdefault(fragment.node_id, []).append(fragment)
    for depth, ancestor in enumerate(path):
        current = ancestor is node
        layer = (
            Layer.CURRENT_NODE
            if current
            else Layer.PARENT_CHAIN
            if depth >= chain_start
            else Layer.OLDER_ANCESTOR
        )
        items.append(
            Item(
                node_subject(ancestor.id),
                layer,
                Inclusion.VERBATIM,
                ancestor.text,
                node_id=ancestor.id,
                rank=depth,
            )
        )
        cited = Layer.EXPLICIT_ANCHOR if current else Layer.SIDE_BRANCH_CITATION
        for i, citation in enumerate(ancestor.citations):
            item = Item(
                citation_subject(ancestor.id, i),
                cited,
                Inclusion.VERBATIM,
                citation_text(citation),
                node_id=ancestor.id,
                rank=depth,
                authorization_id=str(citation.get("authorization_id", "")),
            )
            items.append(revoked(item, citation) if citation.get("status") == "revoked" else item)
        for i, entry in enumerate(ancestor.tool_trace):
            items.append(
                Item(
                    tool_subject(ancestor.id, i),
                    Layer.TOOL_RESULT,
                    Inclusion.VERBATIM,
                    tool_text(entry),
                    node_id=ancestor.id,
                    rank=depth,
                )
            )
        retrieved = by_node.get(ancestor.id, [])
        for attachment in ancestor.attachments:
            subject = attachment_subject(ancestor.id, str(attachment["id"]))
            mine = [f for f in retrieved if f.attachment_id == attachment["id"]]
            if not mine:
                items.append(
                    Item(
                        subject,
                        Layer.ATTACHMENT,
                        Inclusion.OMITTED,
                        "",
                        node_id=ancestor.id,
                        omitted_reason="no retrieved fragment was supplied; its content is "
                        "not stored here",
                        rank=depth,
                    )
                )
            for f in sorted(mine, key=lambda f: (f.start, f.end)):
                items.append(
                    Item(
                        f"{subject}:{f.start}-{f.end}",
                        Layer.ATTACHMENT,
                        Inclusion.FRAGMENT,
                        f.text,
                        node_id=ancestor.id,
                        fragment_start=f.start,
                        fragment_end=f.end,
                        rank=depth,
                    )
                )
    return items


def assemble(items: list[Item], summaries: Mapping[str, Summary], budget: Budget) -> Assembled:
    """Fit `items` (from `candidates`) to `budget`, layer by layer."""

    def tokens_of(item: Item) -> int:
        if item.inclusion is Inclusion.OMITTED:
            return 0
        if item.inclusion is Inclusion.SUMMARY:
            summary = summaries[item.subject]
            return summary.token_estimate or len(summary.text)
        return budget.estimates.get(item.subject, len(item.text))

    items = [dataclasses.replace(i, tokens=tokens_of(i)) for i in items]
    mandatory = [i for i in items if i.mandatory]
    _expect_mandatory_fits(mandatory, budget)

    totals = [sum(i.code_points for i in items), sum(i.tokens for i in items)]

    def fits() -> bool:
        used, tokens = totals
        return used <= budget.code_points and (not budget.tokens or tokens <= budget.tokens)

    def compress(layer: Layer, change: Callable[[Item], Item | None]) -> bool:
        """Apply `change` to the layer's items, lowest priority (oldest) first, until the
        context fits; True once it does."""
        order = sorted(
            (n for n, i in enumerate(items) if i.layer is layer), key=lambda n: items[n].rank
        )
        for n in order:
            if fits():
                return True
            changed = change(items[n])
            if changed is not None:
                changed = dataclasses.replace(changed, tokens=tokens_of(changed))
                totals[0] += changed.code_points - items[n].code_points
                totals[1] += changed.tokens - items[n].tokens
                items[n] = changed
        return fits()

    def summarize(item: Item) -> Item | None:
        summary = summaries.get(item.subject)
        if item.inclusion is not Inclusion.VERBATIM or summary is None:
            return None
        if len(summary.text) >= len(item.text):
            return None
        return dataclasses.replace(
            item, inclusion=Inclusion.SUMMARY, text=summary.text, summary_version=summary.version
        )

    def omit(item: Item) -> Item | None:
        if item.inclusion is Inclusion.OMITTED:
            return None
        return dataclasses.replace(
            item,
            inclusion=Inclusion.OMITTED,
            text="",
            summary_version=0,
            omitted_reason=f"over budget: {item.layer.value} items give way before "
            "higher-priority ones",
        )

    done = fits()
    for layer in SUMMARIZED:
        done = done or compress(layer, summarize)
    for layer in OMITTABLE:
        done = done or compress(layer, omit)
    ordered = sorted(items, key=lambda i: (READING_ORDER.index(i.layer), i.rank))
    stored = json.dumps([item_to_json(i) for i in ordered], sort_keys=True, ensure_ascii=False)
    return Assembled(
        items=tuple(ordered),
        used=sum(i.code_points for i in ordered),
        used_tokens=sum(i.tokens for i in ordered),
        digest=hashlib.sha256(stored.encode()).hexdigest(),
        stored=stored,
    )


def _expect_mandatory_fits(mandatory: list[Item], budget: Budget) -> None:
    needed = sum(i.code_points for i in mandatory)
    tokens = sum(i.tokens for i in mandatory)
    over_points = needed > budget.code_points
    over_tokens = bool(budget.tokens) and tokens > budget.tokens
    if not (over_points or over_tokens):
        return
    listed = ", ".join(
        f"{i.layer.value} {i.subject} ({i.code_points} code points, {i.tokens} tokens)"
        for i in mandatory[:MAX_LISTED]
    )
    more = f" and {len(mandatory) - MAX_LISTED} more" if len(mandatory) > MAX_LISTED else ""
    what = (
        f"{needed} code points for a budget of {budget.code_points}"
        if over_points
        else f"{tokens} tokens for a token budget of {budget.tokens}"
    )
    raise ContextOverBudget(
        f"the mandatory part of this context alone needs {what}; nothing mandatory is ever "
        f"cut, so raise the budget or narrow the boundaries. Mandatory items: {listed}{more}",
        {
            "field": "budget" if over_points else "token_budget",
            "mandatory_code_points": str(needed),
            "mandatory_tokens": str(tokens),
            "mandatory_items": str(len(mandatory)),
        },
    )


_ITEM_FIELDS = tuple(f.name for f in dataclasses.fields(Item))


def item_to_json(item: Item) -> dict[str, Any]:
    data = {name: getattr(item, name) for name in _ITEM_FIELDS}
    data["layer"] = item.layer.value
    data["inclusion"] = item.inclusion.value
    return data


def item_from_json(data: Mapping[str, Any]) -> Item:
    values = dict(data)
    values["layer"] = Layer(values["layer"])
    values["inclusion"] = Inclusion(values["inclusion"])
    return Item(**values)


def digest(items: Sequence[Item]) -> str:
    """The digest `assemble` gives these items (what the recorded digest is checked by)."""
    canonical = json.dumps([item_to_json(i) for i in items], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()
