"""The web view's routes: sign-in, the tree page, a bud's live text, the story, source and
search pages. Every page is read through gRPC for the signed-in binding only."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit

import grpc
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from mirrortree import rpcstatus, tracing
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from webview.auth import COOKIE, Bindings, CannotCheck, NotSignedIn, token_of
from webview.config import Settings
from webview.markup import Markup, el, page
from webview.metrics import Measured
from webview.reads import OBJECT_TYPES, Readers
from webview.search_page import search_page
from webview.source_page import source_page
from webview.story_page import Docs, StoryPage, item_key
from webview.traced import Traced
from webview.tree_page import TreePage

log = logging.getLogger("webview")
STATIC = Path(__file__).with_name("static")
HEADERS = {
    # Pages hold a user's tree and story: no script or style but ours, never framed, never
    # cached, and no referrer that could carry ids to another site.
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}
STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.OUT_OF_RANGE: 413,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}


class SecurityHeaders(BaseHTTPMiddleware):
    async def dispatch(
        self, request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        response = await call_next(request)
        response.headers.update(HEADERS)
        if not request.url.path.startswith("/static/"):
            response.headers["Cache-Control"] = "no-store"
        return response


def nav(signed_in: bool) -> Markup | None:
    if not signed_in:
        return None
    return el(
        "nav",
        el("a", "Tree", href="/"),
        el("a", "Story graph", href="/search"),
        el("form", el("button", "Sign out", type="submit"), action="/logout", method="post"),
    )


def html(title: str, body: object, status: int = 200, *, signed_in: bool = True) -> HTMLResponse:
    return HTMLResponse(page(title, body, nav=nav(signed_in)), status_code=status)


def sign_in_page(status: int, problem: str = "", next_path: str = "/") -> HTMLResponse:
    """The only page a caller without a binding gets: a form, and nothing of anyone's data."""
    body = el(
        "section",
        el("h1", "Sign in"),
        el("p", problem, class_="notice", id="problem") if problem else None,
        el(
            "p",
            "Paste a runtime binding token (TreeService.CreateBinding; `make run` prints one, "
            "and its web view link signs you in by itself).",
        ),
        el(
            "form",
            el("input", type="hidden", name="next", value=next_path),
            el(
                "label",
                "Binding token ",
                el(
                    "input",
                    type="password",
                    name="token",
                    autocomplete="off",
                    required=True,
                    id="token",
                ),
            ),
            el("button", "Sign in", type="submit"),
            action="/login",
            method="post",
            id="login",
        ),
        class_="sign-in",
    )
    return html("Sign in", body, status, signed_in=False)


def safe_next(value: str) -> str:
    """Only a path of this site: never another origin (an open redirect)."""
    if value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value
    return "/"


def same_origin(request: Request) -> bool:
    """Whether a form post comes from a page of this site (browsers send Origin on POST; a
    client that sends none is not a cross-site browser form)."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    # Host only: behind a TLS-terminating proxy the scheme seen here is not the browser's.
    return urlsplit(origin).netloc == request.headers.get("host", "")


def failure_page(error: grpc.aio.AioRpcError) -> HTMLResponse:
    failure = rpcstatus.describe(error)
    status = STATUS.get(failure.code, 502)
    if status == 401:
        return sign_in_page(401, "Your binding is no longer accepted; sign in again.")
    body = el(
        "section",
        el("h1", f"{status}: {failure.reason or failure.code.name.lower()}"),
        el("p", failure.message),
        el("ul", [el("li", v.field, ": ", v.description) for v in failure.violations])
        if failure.violations
        else None,
        class_="failure",
    )
    return html("Cannot show this", body, status)


def build_app(settings: Settings, readers: Readers | None = None) -> Starlette:
    """The ASGI app; `readers` lets tests share channels."""
    reads = readers or Readers(settings)
    bindings = Bindings(reads, settings.binding_ttl_s)

    async def binding_of(request: Request) -> tuple[str, graph_pb2.ResolveBindingResponse]:
        token = token_of(dict(request.cookies), request.headers.get("authorization", ""))
        return token, await bindings.resolve(token)

    def guarded(
        handler: Callable[[Request, str, graph_pb2.ResolveBindingResponse], Awaitable[Response]],
        *,
        api: bool = False,
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                token, binding = await binding_of(request)
            except NotSignedIn:
                if api:
                    return JSONResponse({"error": "unauthenticated"}, status_code=401)
                return sign_in_page(401, "Sign in to see this page.", request.url.path)
            except CannotCheck:
                message = "The story graph cannot check your sign-in right now; retry shortly."
                if api:
                    return JSONResponse({"error": "unavailable"}, 503, {"Retry-After": "2"})
                return html("Unavailable", el("p", message), 503, signed_in=False)
            try:
                return await handler(request, token, binding)
            except grpc.aio.AioRpcError as error:
                if api:
                    failure = rpcstatus.describe(error)
                    return JSONResponse(
                        {"error": failure.reason or failure.code.name.lower()},
                        status_code=STATUS.get(failure.code, 502),
                    )
                return failure_page(error)

        return endpoint

    def forbidden(tree_id: str) -> HTMLResponse:
        return html(
            "Not yours",
            el(
                "section",
                el("h1", "403: not your tree"),
                el("p", "Your binding's session is another tree; this one is not shown."),
            ),
            403,
        )

    async def home(request: Request) -> Response:
        token = token_of(dict(request.cookies), request.headers.get("authorization", ""))
        if not token:
            return sign_in_page(200)
        return await guarded(show_home)(request)

    async def show_home(
        request: Request, token: str, binding: graph_pb2.ResolveBindingResponse
    ) -> Response:
        return RedirectResponse(f"/tree/{binding.session_id}", 303)

    async def login(request: Request) -> Response:
        if not same_origin(request):
            # A form posted from another site would sign the browser in as someone else.
            body = el("section", el("h1", "403: sign in from this site"))
            return html("Refused", body, 403, signed_in=False)
        form = await request.form()
        token = str(form.get("token") or "").strip()
        next_path = safe_next(str(form.get("next") or "/"))
        try:
            await bindings.resolve(token)
        except NotSignedIn:
            return sign_in_page(401, "That token is not a valid binding.", next_path)
        except CannotCheck:
            return html(
                "Unavailable",
                el("p", "Cannot check the token now; retry shortly."),
                503,
                signed_in=False,
            )
        response = RedirectResponse(next_path, 303)
        response.set_cookie(
            COOKIE,
            token,
            httponly=True,
            samesite="strict",
            secure=settings.secure_cookie,
            path="/",
        )
        return response

    async def logout(_: Request) -> Response:
        response = RedirectResponse("/", 303)
        response.delete_cookie(COOKIE, path="/")
        return response

    async def tree(
        request: Request, token: str, binding: graph_pb2.ResolveBindingResponse
    ) -> Response:
        tree_id = request.path_params["tree_id"]
        if tree_id != binding.session_id:
            return forbidden(tree_id)
        data = await reads.load_tree(tree_id)
        return html(data.tree.title, TreePage(data).render())

    async def node(
        request: Request, token: str, binding: graph_pb2.ResolveBindingResponse
    ) -> Response:
        tree_id = request.path_params["tree_id"]
        if tree_id != binding.session_id:
            return JSONResponse({"error": "permission_denied"}, status_code=403)
        found = await reads.node(request.path_params["node_id"])
        if found.tree_id != tree_id:
            return JSONResponse({"error": "not_found"}, status_code=404)
        return JSONResponse(
            {
                "id": found.id,
                "text": found.text,
                "state": tree_pb2.AnswerState.Name(found.answer_state).lower(),
                "acknowledged_chunks": found.acknowledged_chunks,
                "stop_reason": found.stop_reason,
            }
        )

    async def story(
        request: Request, token: str, binding: graph_pb2.ResolveBindingResponse
    ) -> Response:
        kind = request.path_params["object_type"]
        if kind not in OBJECT_TYPES:
            body = el(
                "section",
                el("h1", "404: no such object type"),
                el("p", f"Use one of: {', '.join(OBJECT_TYPES)}."),
            )
            return html("Not found", body, 404)
        ref = common_pb2.ObjectRef(type=OBJECT_TYPES[kind], id=request.path_params["object_id"])
        current = await reads.context_whole(ref, graph_pb2.CURRENT, token, ("relations",))
        timeline = await reads.context_whole(
            ref, graph_pb2.TIMELINE, token, ("timeline", "undated", "sources")
        )
        docs: Docs = {}
        for mode, response in ((graph_pb2.CURRENT, current), (graph_pb2.TIMELINE, timeline)):
            for found in response.collections:
                for item in found.items:
                    text = await reads.item_json(ref, mode, item, token)
                    with contextlib.suppress(ValueError):
                        parsed = json.loads(text)
                        if isinstance(parsed, dict):
                            docs[item_key(item)] = parsed
        view = StoryPage(ref, current, timeline, docs)
        return html(view.title(), view.render())

    async def source(
        request: Request, token: str, binding: graph_pb2.ResolveBindingResponse
    ) -> Response:
        reference_id = request.path_params["reference_id"]
        data = await reads.source(reference_id, token)
        return html(f"Source {reference_id}", source_page(reference_id, data))

    async def search(
        request: Request, token: str, binding: graph_pb2.ResolveBindingResponse
    ) -> Response:
        query = request.query_params.get("q", "").strip()
        if not query:
            return html("Story graph", search_page("", None))
        return html("Story graph", search_page(query, await reads.search(query, token)))

    async def healthz(_: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def no_icon(_: Request) -> Response:
        return Response(status_code=204)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await reads.close()

    return Starlette(
        routes=[
            Route("/", home),
            Route("/login", login, methods=["POST"]),
            Route("/logout", logout, methods=["POST"]),
            Route("/tree/{tree_id}", guarded(tree)),
            Route("/api/trees/{tree_id}/nodes/{node_id}", guarded(node, api=True)),
            Route("/story/{object_type}/{object_id}", guarded(story)),
            Route("/source/{reference_id}", guarded(source)),
            Route("/search", guarded(search)),
            Route("/healthz", healthz),
            Route("/favicon.ico", no_icon),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        middleware=[
            *([Middleware(Traced)] if tracing.enabled() else []),
            Middleware(Measured),
            Middleware(SecurityHeaders),
        ],
        lifespan=lifespan,
    )
