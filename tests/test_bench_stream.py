"""The benchmark's foreign-text ingestion stream (bench.run --ingest-texts foreign)."""

from __future__ import annotations

from google.protobuf import json_format

from bench.mixed import in_foreign_letters
from bench.story import TERMS, StoryPlan


def trigrams(text: str) -> set[str]:
    folded = text.lower()
    return {folded[i : i + 3] for i in range(len(folded) - 2)}


def test_foreign_texts_share_no_trigram_with_the_searches_and_keep_every_id() -> None:
    searched = set().union(*(trigrams(term) for term in TERMS.values()))
    rewritten = 0
    for _, request in StoryPlan(3_000, 300).requests():
        before = json_format.MessageToDict(request)
        in_foreign_letters(request)
        texts = [
            *(t for e in request.events for t in (e.title, e.description)),
            *(r.fragment for r in request.source_references),
            *(r.reason for r in request.relations),
            *(c.description for c in request.entity_changes),
            *(f.text for f in request.leaf_facts),
        ]
        rewritten += len(texts)
        assert not searched & set().union(*(trigrams(t) for t in texts))
        after = json_format.MessageToDict(request)
        for part in ("events", "sourceReferences", "relations", "entityChanges", "leafFacts"):
            ids = [o["id"] for o in after.get(part, [])]
            assert ids == [o["id"] for o in before.get(part, [])]
    assert rewritten > 1_000
