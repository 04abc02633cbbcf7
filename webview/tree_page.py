"""The tree page: questions with their edits as versions, candidate answers side by side,
continuations, buds, adopted entries, branch states and the main lines per scope."""

from __future__ import annotations

from collections import defaultdict

from mirrortree.v1 import tree_pb2
from webview.markup import Markup, el, join
from webview.reads import TreeData

SCOPES = (
    (tree_pb2.REAL_EXPERIENCE, "real", "Real experience"),
    (tree_pb2.WORLD_CANON, "world", "World canon"),
    (tree_pb2.REHEARSAL_RECORD, "rehearsal", "Rehearsal record"),
)
# Branches in these states start folded: their work is paused for good or hidden.
FOLDED = frozenset({tree_pb2.CONCLUDED, tree_pb2.ARCHIVED})
SHORT = 140


# Nodes shown after a question's candidate answers, apart from them.
NOTE_KINDS = (tree_pb2.COMPARISON, tree_pb2.OBSERVATION)


def word(enum: object, value: int) -> str:
    """An enum value as the lower-case word the page shows ("" when unset)."""
    if value == 0:
        return ""
    return str(enum.Name(value)).lower().replace("_", " ")  # type: ignore[attr-defined]


def short(text: str, limit: int = SHORT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def count(number: int, thing: str) -> str:
    return f"{number} {thing}" if number == 1 else f"{number} {thing}s"


def badge(text: str, kind: str) -> Markup:
    return el("span", text, class_=f"badge {kind}")


class TreePage:
    """Renders one TreeData; the tree's structure is indexed once here."""

    def __init__(self, data: TreeData) -> None:
        self.data = data
        self.by_id = {node.id: node for node in data.nodes}
        self.children: dict[str, list[tree_pb2.Node]] = defaultdict(list)
        for node in data.nodes:  # creation order: ListNodes returns it
            self.children[node.parent_id].append(node)
        self.on_main_line: dict[str, list[str]] = defaultdict(list)
        newest: set[tuple[int, str]] = set()
        for version in data.versions:  # newest first
            key = (version.scope, version.world)
            if key in newest:
                continue
            newest.add(key)
            label = f"{self.scope_label(version)} v{version.version}"
            for node_id in version.node_ids:
                self.on_main_line[node_id].append(label)

    @staticmethod
    def scope_label(version: tree_pb2.MainLineVersion) -> str:
        label = {s: title.lower() for s, _, title in SCOPES}.get(version.scope, "unknown scope")
        return f"{label} ({version.world})" if version.world else label

    # ---- the page ----------------------------------------------------------------------------

    def render(self) -> Markup:
        tree = self.data.tree
        facts = [
            ("owner", tree.owner),
            ("project", tree.project_id or "none"),
            ("default realm", word(tree_pb2.Realm, tree.default_realm) or "real"),
            ("revision", str(tree.revision)),
            ("nodes", str(len(self.data.nodes))),
        ]
        header = el(
            "section",
            el("h1", tree.title),
            el("dl", [[el("dt", k), el("dd", v)] for k, v in facts], class_="facts"),
            el("p", "Read-only view. ", el("a", "Search the story graph", href="/search")),
            class_="tree-head",
        )
        cut = None
        if self.data.nodes_cut:
            cut = el(
                "p",
                f"This tree has more than {len(self.data.nodes)} nodes; only the first "
                f"{len(self.data.nodes)} (in creation order) are shown.",
                class_="notice",
            )
        roots = self.children.get("", [])
        body = (
            self.lineages(roots)
            if roots
            else el("p", "This tree has no questions yet.", class_="empty")
        )
        return join(
            [
                header,
                self.main_lines(),
                el("section", el("h2", "Conversation"), cut, body, class_="conversation"),
            ]
        )

    # ---- main lines --------------------------------------------------------------------------

    def main_lines(self) -> Markup:
        groups: dict[tuple[int, str], list[tree_pb2.MainLineVersion]] = defaultdict(list)
        for version in self.data.versions:
            groups[(version.scope, version.world)].append(version)
        by_id = {v.id: v for v in self.data.versions}
        blocks = []
        for scope, slug, title in SCOPES:
            lines = sorted(k for k in groups if k[0] == scope)
            if not lines:
                blocks.append(
                    el(
                        "div",
                        el("h3", title),
                        el("p", "No version yet: nothing was confirmed into this main line."),
                        class_=f"main-line scope-{slug} none",
                        data_scope=slug,
                    )
                )
                continue
            for key in lines:
                heading = f"{title} — world {key[1]}" if key[1] else title
                rows = [self.version(v, by_id) for v in groups[key]]
                blocks.append(
                    el(
                        "div",
                        el("h3", heading),
                        el("ol", rows, class_="versions"),
                        class_=f"main-line scope-{slug}",
                        data_scope=slug,
                    )
                )
        cut = None
        if self.data.versions_cut:
            cut = el("p", "Older main-line versions are not shown.", class_="notice")
        return el(
            "section",
            el("h2", "Main lines"),
            el(
                "p",
                "Versions the user confirmed, newest first, per scope; each says what it replaced.",
                class_="hint",
            ),
            cut,
            el("div", blocks, class_="main-lines"),
            class_="main-lines-section",
        )

    def version(
        self, version: tree_pb2.MainLineVersion, by_id: dict[str, tree_pb2.MainLineVersion]
    ) -> Markup:
        replaced = by_id.get(version.replaces_version_id)
        if not version.replaces_version_id:
            replaces = el("p", "The first version of this main line: it replaced nothing.")
        elif replaced is None:
            replaces = el("p", f"Replaces version {version.replaces_version_id} (not listed here).")
        else:
            left = [n for n in replaced.node_ids if n not in set(version.node_ids)]
            joined = [n for n in version.node_ids if n not in set(replaced.node_ids)]
            replaces = el(
                "div",
                el(
                    "p",
                    "Replaces ",
                    el("a", f"v{replaced.version}", href=f"#version-{replaced.id}"),
                    ".",
                ),
                el("p", "Left the line: ", self.node_links(left) or "nothing", class_="left"),
                el("p", "Joined: ", self.node_links(joined) or "nothing", class_="joined"),
                class_="replaces",
            )
        snapshot = {n.id: n for n in version.snapshot}
        path = []
        for node_id in version.node_ids:
            node = snapshot.get(node_id) or self.by_id.get(node_id)
            text = short(node.text, 90) if node is not None else "(not shown)"
            kind = word(tree_pb2.NodeKind, node.kind) if node is not None else "node"
            path.append(el("li", el("a", f"{kind}: ", text, href=f"#node-{node_id}")))
        candidates = [
            el(
                "li",
                f"{c.kind}",
                f" ({c.detail})" if c.detail else "",
                f": {c.status}",
                f" — {c.subject}: " if c.subject else " — " if c.text else "",
                short(c.text, 140),
            )
            for c in version.candidates
        ]
        return el(
            "li",
            el(
                "div",
                el("strong", f"v{version.version}"),
                f" confirmed by {version.confirmed_by or 'unknown'} at {version.created_at}",
                class_="version-head",
            ),
            replaces,
            el("ol", path, class_="path"),
            el("p", "Candidates: ", el("ul", candidates)) if candidates else None,
            el("p", "Never causes: ", ", ".join(version.forbidden_effects))
            if version.forbidden_effects
            else None,
            id=f"version-{version.id}",
            class_="version",
        )

    def node_links(self, node_ids: list[str]) -> Markup | None:
        if not node_ids:
            return None
        links = []
        for node_id in node_ids:
            node = self.by_id.get(node_id)
            links.append(
                el("a", short(node.text, 50) if node else node_id, href=f"#node-{node_id}")
            )
            links.append(Markup("; "))
        return join(links[:-1])

    # ---- the conversation --------------------------------------------------------------------

    def lineages(self, siblings: list[tree_pb2.Node]) -> Markup:
        """Questions among siblings, each edit lineage together (an edit stays beside the
        question it edits, under the same parent)."""
        groups: dict[str, list[tree_pb2.Node]] = {}
        for node in siblings:
            if node.kind != tree_pb2.QUESTION:
                continue
            groups.setdefault(self.lineage_root(node), []).append(node)
        return join(self.lineage(versions) for versions in groups.values())

    def lineage_root(self, question: tree_pb2.Node) -> str:
        seen = {question.id}
        while question.version_of and question.version_of in self.by_id:
            question = self.by_id[question.version_of]
            if question.id in seen:
                break
            seen.add(question.id)
        return question.id

    def lineage(self, versions: list[tree_pb2.Node]) -> Markup:
        if len(versions) == 1:
            return self.question(versions[0])
        versions = sorted(versions, key=lambda q: (q.version, q.ordinal))
        newest = versions[-1]
        return el(
            "div",
            el("p", f"Question edited: {len(versions)} versions", class_="lineage-head"),
            [
                el(
                    "details",
                    el(
                        "summary",
                        badge(f"v{q.version}", "version"),
                        " newest" if q is newest else " earlier version",
                        " — ",
                        short(q.text, 80),
                    ),
                    self.question(q),
                    open=q is newest,
                    class_="question-version",
                )
                for q in versions
            ],
            class_="lineage",
        )

    def question(self, question: tree_pb2.Node) -> Markup:
        answers = [n for n in self.children.get(question.id, []) if n.kind == tree_pb2.ANSWER]
        notes = [n for n in self.children.get(question.id, []) if n.kind in NOTE_KINDS]
        row = (
            el(
                "div",
                [self.answer(a, question) for a in answers],
                class_="answers",
            )
            if answers
            else el("p", "No answer yet.", class_="empty")
        )
        body = el(
            "section",
            el(
                "div",
                badge("question", "kind"),
                self.common_badges(question),
                badge(f"v{question.version}", "version") if question.version > 1 else None,
                class_="badges",
            ),
            el("div", question.text, class_="text"),
            self.extras(question),
            el("p", count(len(answers), "candidate answer"), class_="count") if answers else None,
            row,
            [self.note(n) for n in notes],
            id=f"node-{question.id}",
            class_="node question",
            data_node=question.id,
        )
        return self.branch(question, body)

    def answer(self, answer: tree_pb2.Node, question: tree_pb2.Node) -> Markup:
        state = answer.answer_state
        streaming = state == tree_pb2.STREAMING
        adopted = question.adopted_answer_id == answer.id
        badges = [
            badge("answer", "kind"),
            badge(word(tree_pb2.AnswerLifecycle, answer.lifecycle) or "answer", "lifecycle"),
            badge(
                "streaming bud" if streaming else word(tree_pb2.AnswerState, state) or "",
                f"state state-{word(tree_pb2.AnswerState, state) or 'none'}",
            ),
            badge("adopted: the question's working entry", "adopted") if adopted else None,
            self.common_badges(answer),
        ]
        stopped = None
        if state == tree_pb2.FROZEN:
            stopped = el("p", f"Frozen: {answer.stop_reason or 'stopped'}", class_="stop")
        extends = None
        if answer.extends_answer_id:
            extends = el(
                "p",
                "Continues the frozen answer ",
                el(
                    "a",
                    short(self.text_of(answer.extends_answer_id), 40),
                    href=f"#node-{answer.extends_answer_id}",
                ),
                class_="extends",
            )
        chunks = None
        if answer.acknowledged_chunks or streaming:
            chunks = el(
                "p",
                el("span", str(answer.acknowledged_chunks), class_="chunks"),
                " chunks acknowledged",
                class_="bud-progress",
            )
        return el(
            "article",
            el("div", badges, class_="badges"),
            extends,
            el(
                "div",
                answer.text,
                class_="text bud-text" if streaming else "text",
                data_bud=answer.id if streaming else None,
                data_tree=answer.tree_id if streaming else None,
            ),
            chunks,
            stopped,
            self.extras(answer),
            self.follow_ups(answer),
            id=f"node-{answer.id}",
            class_=f"node answer{' is-adopted' if adopted else ''}",
            data_node=answer.id,
        )

    def continuation(self, node: tree_pb2.Node) -> Markup:
        body = el(
            "article",
            el(
                "div",
                badge("continuation", "kind"),
                badge(word(tree_pb2.ContinuationKind, node.continuation_kind) or "", "ckind"),
                self.common_badges(node),
                class_="badges",
            ),
            el("div", node.text, class_="text"),
            self.extras(node),
            self.follow_ups(node),
            id=f"node-{node.id}",
            class_="node continuation",
            data_node=node.id,
        )
        return self.branch(node, body)

    def follow_ups(self, parent: tree_pb2.Node) -> Markup | None:
        below = self.children.get(parent.id, [])
        if not below:
            return None
        continuations = [n for n in below if n.kind == tree_pb2.CONTINUATION]
        questions = [n for n in below if n.kind == tree_pb2.QUESTION]
        observations = [n for n in below if n.kind == tree_pb2.OBSERVATION]
        label = []
        if continuations:
            label.append(count(len(continuations), "continuation"))
        if questions:
            label.append(count(len(questions), "follow-up question"))
        if observations:
            label.append(count(len(observations), "task observation"))
        if not label:
            return None
        return el(
            "details",
            el("summary", " and ".join(label)),
            [self.continuation(c) for c in continuations],
            [self.note(o) for o in observations],
            self.lineages(questions),
            open=True,
            class_="follow-ups",
        )

    def note(self, node: tree_pb2.Node) -> Markup:
        """A comparison of candidate answers, or a delegated task's observation (an echo that
        is no answer until the user accepts it)."""
        kind = word(tree_pb2.NodeKind, node.kind) or "node"
        details = None
        if node.kind == tree_pb2.COMPARISON and node.HasField("comparison"):
            c = node.comparison
            preferred = c.preferred_answer_id
            details = el(
                "ul",
                el(
                    "li",
                    "Compared: ",
                    [
                        [
                            ", " if i else None,
                            el("a", f"answer {i + 1}", href=f"#node-{a}"),
                            " (preferred)" if a == preferred else None,
                        ]
                        for i, a in enumerate(c.answer_ids)
                    ],
                ),
                el("li", "Criteria: ", "; ".join(c.criteria)) if c.criteria else None,
                class_="comparison-details",
            )
        elif node.kind == tree_pb2.OBSERVATION:
            details = el(
                "p", "From a delegated task; not an answer unless accepted.", class_="echo"
            )
        body = el(
            "section",
            el("div", badge(kind, "kind"), self.common_badges(node), class_="badges"),
            el("div", node.text, class_="text"),
            details,
            self.extras(node),
            id=f"node-{node.id}",
            class_=f"node {kind}",
            data_node=node.id,
        )
        return self.branch(node, body)

    def branch(self, node: tree_pb2.Node, body: Markup) -> Markup:
        moved = self.data.branches.get(node.id)
        if moved is None:
            return body
        state = word(tree_pb2.BranchState, moved.state) or "active"
        conclusion = None
        if moved.HasField("last_conclusion"):
            c = moved.last_conclusion
            conclusion = el(
                "div",
                el("p", f"Concluded by {c.concluded_by} at {c.concluded_at}:"),
                el("p", c.summary, class_="text"),
                el(
                    "p",
                    f"{len(c.open_question_ids)} open questions, "
                    f"{len(c.candidate_answer_ids)} candidate answers left at the conclusion.",
                ),
                class_="conclusion",
            )
        history = [
            el(
                "li",
                f"{word(tree_pb2.BranchState, t.from_state)} → "
                f"{word(tree_pb2.BranchState, t.to_state)} by {t.changed_by} at {t.changed_at}",
                f": {t.reason}" if t.reason else "",
            )
            for t in moved.transitions
        ]
        return el(
            "details",
            el(
                "summary",
                badge(f"branch {state}", f"branch-state branch-{state}"),
                f" revision {moved.revision} — ",
                short(node.text, 80),
            ),
            conclusion,
            el("ul", history, class_="transitions") if history else None,
            body,
            open=moved.state not in FOLDED,
            class_=f"branch branch-{state}",
            data_branch=node.id,
            data_state=state,
        )

    # ---- small parts -------------------------------------------------------------------------

    def text_of(self, node_id: str) -> str:
        node = self.by_id.get(node_id)
        return node.text if node is not None else node_id

    def common_badges(self, node: tree_pb2.Node) -> Markup:
        realm = word(tree_pb2.Realm, node.realm)
        parts = [badge(f"realm {realm}" + (f" ({node.world})" if node.world else ""), "realm")]
        if node.branch_state and node.id not in self.data.branches:
            state = word(tree_pb2.BranchState, node.branch_state)
            parts.append(badge(f"in a {state} branch", f"branch-state branch-{state}"))
        for label in self.on_main_line.get(node.id, []):
            parts.append(badge(f"main line: {label}", "on-main-line"))
        return join(parts)

    def extras(self, node: tree_pb2.Node) -> Markup:
        parts = []
        if node.reasoning_summary:
            parts.append(el("p", el("strong", "Reasoning summary: "), node.reasoning_summary))
        if node.evidence:
            parts.append(
                el("div", el("strong", "Evidence"), el("ul", [el("li", e) for e in node.evidence]))
            )
        if node.tool_trace:
            parts.append(
                el(
                    "div",
                    el("strong", "Tool trace"),
                    el(
                        "ul",
                        [
                            el("li", t.tool, ": ", t.input_summary, " → ", t.output_summary)
                            for t in node.tool_trace
                        ],
                    ),
                )
            )
        if node.conditions.model_strategy:
            parts.append(el("p", "Model: ", node.conditions.model_strategy, class_="meta"))
        if node.citations:
            parts.append(
                el(
                    "div",
                    el("strong", "Cites"),
                    el(
                        "ul",
                        [
                            el(
                                "li",
                                el(
                                    "a",
                                    short(c.snapshot or c.node_id, 80),
                                    href=f"#node-{c.node_id}",
                                ),
                            )
                            for c in node.citations
                        ],
                    ),
                )
            )
        if node.attachments:
            parts.append(
                el("p", "Attachments: ", ", ".join(a.name or a.id for a in node.attachments))
            )
        parts.append(el("p", f"#{node.ordinal} · {node.created_at}", class_="meta"))
        return join(parts)
