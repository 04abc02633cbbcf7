"""Facts in effect in a context's memory layer (T11 with T18, T24): items of their own after
the preferences, in the order stated, labelled with their kind and where they are in effect;
at most MAX_FACTS (the newest), the rest counted; omitted under budget as memory is."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from tree_service.commitments import CommitmentKind
from tree_service.context_assembly import layers
from tree_service.context_assembly.layers import Budget, Fact, Inclusion, Layer, Memory
from tree_service.domain import Node, NodeKind, Realm

AT = datetime(2026, 12, 4, tzinfo=UTC)


def path() -> list[Node]:
    return [
        Node(
            id=str(uuid.uuid4()),
            tree_id="t",
            parent_id=None,
            kind=NodeKind.QUESTION,
            realm=Realm.REAL,
            text="Book the train?",
            revision=1,
            ordinal=1,
            created_at=AT,
        )
    ]


def fact(n: int, kind: CommitmentKind = CommitmentKind.STATED_FACT, scope: str = "real") -> Fact:
    return Fact(f"c{n:03}", "n", kind, scope, f"statement {n}")


def memory_of(items: list[layers.Item] | tuple[layers.Item, ...]) -> list[layers.Item]:
    return [i for i in items if i.layer is Layer.LONG_TERM_MEMORY]


def test_facts_follow_the_preferences_in_the_order_stated_and_say_where_they_hold():
    facts = [
        fact(1),
        fact(2, CommitmentKind.AUTHORIZATION),
        fact(3, CommitmentKind.RELATIONSHIP, "world_canon:Arden"),
    ]
    items = layers.candidates(path(), [], [Memory("p1", "travel", "by train")], [], 2, facts=facts)
    assembled = layers.assemble(items, {}, Budget(10_000))
    assert [(i.subject, i.text) for i in memory_of(assembled.items)] == [
        ("memory:p1", "travel: by train"),
        ("fact:c001", "stated fact in effect in the real realm: statement 1"),
        ("fact:c002", "authorization in effect in the real realm: statement 2"),
        ("fact:c003", "relationship in effect in world 'Arden': statement 3"),
    ]
    assert {i.node_id for i in memory_of(assembled.items)[1:]} == {"n"}


def test_a_context_holds_the_newest_facts_and_counts_the_rest():
    facts = [fact(n) for n in range(layers.MAX_FACTS + 3)]
    items = memory_of(layers.candidates(path(), [], [], [], 2, facts=facts))
    kept = [i for i in items if i.inclusion is Inclusion.VERBATIM]
    assert [i.subject for i in kept] == [f"fact:c{n:03}" for n in range(3, layers.MAX_FACTS + 3)]
    (left_out,) = [i for i in items if i.inclusion is Inclusion.OMITTED]
    assert left_out.subject == layers.FACTS_LEFT_OUT
    assert left_out.omitted_reason.startswith("3 older fact(s) in effect left out")
    assert left_out.text == "" and left_out.rank > kept[-1].rank

    unread = memory_of(layers.candidates(path(), [], [], [], 2, facts=[], facts_unread=True))
    assert [i.subject for i in unread] == [layers.FACTS_LEFT_OUT]
    assert "older facts in effect may be left out too" in unread[0].omitted_reason
    alone = memory_of(layers.candidates(path(), [], [], [], 2, facts=facts[:1]))
    assert [i.subject for i in alone] == ["fact:c000"]  # nothing left out, nothing said


def test_under_budget_facts_give_way_as_memory_does_oldest_first_after_the_preferences():
    node = path()
    facts = [fact(1), fact(2)]
    items = layers.candidates(node, [], [Memory("p1", "s", "t" * 50)], [], 2, facts=facts)
    fact_size = len(layers.fact_text(facts[1]))
    budget = Budget(len(node[0].text) + fact_size)  # room for the node and one fact
    first = layers.assemble(items, {}, budget)
    by_subject = {i.subject: i.inclusion for i in first.items}
    assert by_subject == {
        f"node:{node[0].id}": Inclusion.VERBATIM,
        "memory:p1": Inclusion.OMITTED,
        "fact:c001": Inclusion.OMITTED,
        "fact:c002": Inclusion.VERBATIM,
    }
    assert first == layers.assemble(
        layers.candidates(node, [], [Memory("p1", "s", "t" * 50)], [], 2, facts=facts),
        {},
        budget,
    )
