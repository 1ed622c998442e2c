"""The REST face: a jupyter_server extension named ``jupymem``.

Routes live under ``{base_url}/jupymem/api/`` and are thin: each resolves the
``path`` it is given (a notebook or directory relative to the server root,
never outside it), calls the one core API (``core.opening``'s
``require_project`` / ``init_project`` and ``Project``) in a worker thread so SQLite never blocks
the event loop, and answers with ``models.to_json`` of what the core returns (the
one serializer every face uses).

Routes (``path`` is a query parameter on GET and a body field on POST):

=====================================  ==============================================
``GET  status``                        ``jupymem.status()`` + ``root_path``,
                                       ``server_root_in_repo`` (for notebook links)
``POST init``                          binds the repository; answers like ``status``
``GET  memories?q&kind&all&limit``     ``SearchResult`` (each hit with ``level``, the
                                       word for its confidence, and ``retrieval``: the
                                       legs and encoders after it) when ``q`` is given,
``     &offset&per_kind``              else a page ``{memories, total, offset, revision}``;
                                       with ``per_kind=N`` the first N of every kind and
                                       ``kinds``, each kind's count
``POST memories``                      records (initializes on the first record);
                                       body: statement, kind, topic, evidence,
                                       supersedes, recorder, quote, cell_id,
                                       private (never written to .jupymem/);
                                       answers the ``Memory`` plus ``similar``
``GET  memories/{id}``                 ``{memory, history}``
``POST memories/{id}/confirm``         the confirmed ``Memory``
``POST memories/{id}/supersede``       the new ``Memory`` plus ``similar`` (body as
                                       for recording)
``POST memories/{id}/retire``          the retired ``Memory`` (body: reason)
``GET  evidence?session&limit``        ``{evidence: [Evidence]}`` (staged failures),
                                       each with ``kept_by``: the memory citing it
``POST evidence/{handle}/keep``        a ``Memory`` citing the failure
``GET  block?cap``                     ``Block``
``POST share``                         sharing through git on (body ``on``: true,
                                       the default) or off; ``{message, ...}`` and
                                       the new ``status``
=====================================  ==============================================

Errors are translated in one place (``_json_errors``): every ``JupymemError``,
including the REST-only ones defined here, becomes
``{"error": code, "message": ...}`` with its ``http_status``; so does a driver
error that means a damaged database, a read-only home or a full disk (5xx with
its code). Reading never initializes a repository; only ``POST init`` and
recording (``POST memories``) do, as everywhere else.

Every entrance is bounded before the core sees it: a body is a JSON object of at
most ``max_body_bytes`` and ``MAX_JSON_DEPTH`` levels, holding only the fields its
route takes, each of its type (400 names the field); a ``path`` is at most
``MAX_PATH_BYTES`` (and ``MAX_NAME_BYTES`` per component), so the file system is
never asked about a name it would refuse.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, TypeVar, cast, overload

import tornado.web
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.application import ExtensionApp
from jupyter_server.extension.handler import ExtensionHandlerMixin
from traitlets import Int, Unicode

from ..core import overview
from ..storage import validate
from ..intake import strictjson
from ..config import Settings
from ..errors import InvalidStatement, JupymemError
from ..models import KINDS, Provenance, to_json
from ..core.project import Project
from ..intake.translate import check_first_record
from ..core.opening import init_project
from ..storage.damage import storage_error
from . import rest_lists
from .paths import BadPath, PathNotFound, PathOutsideRoot, PathTooLong, resolve_path

__all__ = ["JupymemApp", "BadPath", "PathNotFound", "PathOutsideRoot", "PathTooLong", "resolve_path", "to_json"]

# -- errors only the REST face can meet ---------------------------------------


class BadJson(JupymemError, code="bad_json"):
    """Raised when a request body is not a JSON object."""


class BadRequest(JupymemError, code="bad_request"):
    """Raised when a parameter is missing or has the wrong type."""


class BodyTooLarge(JupymemError, code="body_too_large", http_status=413):
    """Raised when a request body exceeds ``JupymemApp.max_body_bytes``."""


MAX_JSON_DEPTH = 16  # the deepest body a route takes is 3 levels
MAX_HANDLES = 64  # the staging window


# -- the one translation helper -------------------------------------------------

F = TypeVar("F", bound=Callable[..., Awaitable[None]])


def _json_errors(method: F) -> F:
    """Answer a ``JupymemError`` as ``{"error": code, "message": ...}`` with its status.

    Anything else is a bug and goes to jupyter_server's own 500 handling.
    """

    @functools.wraps(method)
    async def wrapper(self: _Handler, *args: Any, **kwargs: Any) -> None:
        try:
            await method(self, *args, **kwargs)
        except Exception as exc:
            err = exc if isinstance(exc, JupymemError) else storage_error(exc)
            if err is None:
                raise
            self.set_status(err.http_status)
            self.finish({"error": err.code, "message": err.message})

    return wrapper  # type: ignore[return-value]


def _endpoint(method: F) -> F:
    """What every handler method wears: a signed-in user (tornado), allowed on the
    handler's ``auth_resource`` (jupyter_server), its ``JupymemError`` answered as JSON."""
    return cast(F, tornado.web.authenticated(authorized(_json_errors(method))))


# -- paths ----------------------------------------------------------------------


def _relative_posix(path: Path, base: Path) -> str | None:
    try:
        rel = path.relative_to(base).as_posix()
    except ValueError:
        return None
    return "" if rel == "." else rel


# -- handlers --------------------------------------------------------------------


class _Handler(ExtensionHandlerMixin, APIHandler):
    """Shared plumbing: settings, path, body, and running core calls off the loop."""

    auth_resource = "jupymem"

    @property
    def app(self) -> JupymemApp:
        return cast("JupymemApp", self.extensionapp)

    @property
    def core(self) -> Settings:
        return self.app.core_settings

    @property
    def server_root(self) -> Path:
        return Path(self.serverapp.root_dir).resolve()

    def target(self, raw: str | None) -> Path:
        return resolve_path(self.server_root, raw)

    def body(self, *fields: str) -> dict[str, Any]:
        """The JSON object sent, holding only ``fields`` (and ``path``)."""
        data = self.request.body or b""
        if len(data) > self.app.max_body_bytes:
            raise BodyTooLarge(
                f"The request body has {len(data)} bytes; jupymem accepts at most "
                f"{self.app.max_body_bytes}. Statements are meant to be short."
            )
        if not data.strip():
            return {}
        try:  # the reader every entrance uses: no duplicate keys, NaN or integers SQLite cannot hold
            parsed = strictjson.loads(data, max_bytes=self.app.max_body_bytes, max_depth=MAX_JSON_DEPTH)
        except strictjson.StrictJSONError as exc:
            raise BadJson(f"The request body {exc}.") from None
        if not isinstance(parsed, dict):
            raise BadJson("The request body must be a JSON object.")
        unknown = sorted(k for k in parsed if k not in ("path", *fields))
        if unknown:
            takes = ", ".join(("path", *fields))
            raise BadRequest(f"{validate.quoted(unknown[0])} is not a field of this request; it takes: {takes}.")
        return parsed

    def arg_str(self, name: str, default: str | None = None) -> str | None:
        return self.get_query_argument(name, default)

    def arg_flag(self, name: str) -> bool:
        return (self.get_query_argument(name, "") or "").lower() in ("1", "true", "yes", "on")

    def arg_int(self, name: str, default: int, lo: int, hi: int) -> int:
        raw = self.get_query_argument(name, None)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw)
        except ValueError:
            raise BadRequest(f"{name} must be a whole number, not {raw!r}.") from None
        return max(lo, min(hi, value))

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(fn, *args, **kwargs)

    def reply(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.finish(json.dumps(data, ensure_ascii=False, separators=(",", ":")))

    # core access: reading never initializes

    def existing(self, target: Path) -> Project:
        from ..core.opening import require_project

        return require_project(target, self.core)

    def status_of(self, target: Path) -> dict[str, Any]:
        """``jupymem.status`` as JSON, its paths said relative to the server root."""
        root = self.server_root
        out = overview.status(target, self.core, within=root).to_dict()
        out["path"] = _relative_posix(target, root) or ""
        repo = Path(out["root"]) if out["root"] else None
        out["root_path"] = _relative_posix(repo, root) if repo else None
        out["server_root_in_repo"] = _relative_posix(root, repo) if repo else None
        if out.get("matches"):
            # Checkouts of the same repository elsewhere: named only inside the root (one
            # outside that still exists would have kept it from matching at all).
            roots = [_relative_posix(Path(r), root) for r in out["matches"]["roots"]]
            out["matches"]["roots"] = [r for r in roots if r is not None]
        if out.get("retrieval"):
            out["retrieval"] = self.with_plan(out["retrieval"])
        return out

    def with_plan(self, retrieval: dict[str, Any]) -> dict[str, Any]:
        """``retrieval`` plus ``encoders``: what JUPYMEM_ENCODER asks this server for ("transformer",
        "static" or "none"), so the sidebar can tell "not loaded yet" from "turned off"."""
        from ..retrieval.tiers import plan

        asked = plan(self.core.encoder)
        return {**retrieval, "encoders": "none" if asked.off else "transformer" if asked.transformer else "static"}


@overload
def _get_str(body: dict[str, Any], name: str, *, required: Literal[True]) -> str: ...
@overload
def _get_str(body: dict[str, Any], name: str, *, default: str) -> str: ...
@overload
def _get_str(body: dict[str, Any], name: str) -> str | None: ...
def _get_str(body: dict[str, Any], name: str, *, required: bool = False, default: str | None = None) -> str | None:
    value = body.get(name, default)
    if value is None:
        if required:
            raise BadRequest(f"{name!r} is required.")
        return None
    if not isinstance(value, str):
        raise BadRequest(f"{name!r} must be a string.")
    return value


def _get_bool(body: dict[str, Any], name: str, default: bool = False) -> bool:
    value = body.get(name, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise BadRequest(f"{name!r} must be true or false.")
    return value


def _get_handles(body: dict[str, Any]) -> list[str]:
    value = body.get("evidence")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(h, str) and 0 < len(h) <= 64 for h in value):
        raise BadRequest("'evidence' must be a list of handles such as ['ev-0123abcd'].")
    if len(value) > MAX_HANDLES:
        raise BadRequest(f"'evidence' cites {len(value)} failures; the limit is {MAX_HANDLES}.")
    return value


def _provenance(body: dict[str, Any], target: Path, **fixed: Any) -> Provenance:
    """Who and where: a person by default; the file in focus as the notebook."""
    recorder = _get_str(body, "recorder", default="person")
    if recorder not in ("person", "assistant"):
        raise BadRequest("'recorder' must be 'person' or 'assistant'.")
    fields: dict[str, Any] = {
        "recorder": recorder,
        "notebook": str(target) if target.is_file() else None,
        "cell_id": _get_str(body, "cell_id"),
        "quote": _get_str(body, "quote"),
    }
    fields.update({k: v for k, v in fixed.items() if v is not None})
    return Provenance(**fields)


class StatusHandler(_Handler):
    @_endpoint
    async def get(self) -> None:
        target = self.target(self.arg_str("path"))
        self.reply(await self.call(self.status_of, target))


class InitHandler(_Handler):
    @_endpoint
    async def post(self) -> None:
        body = self.body()
        target = self.target(_get_str(body, "path"))

        def work() -> dict[str, Any]:
            init_project(target, self.core, within=self.server_root)
            return self.status_of(target)

        self.reply(await self.call(work))


class MemoriesHandler(_Handler):
    @_endpoint
    async def get(self) -> None:
        target = self.target(self.arg_str("path"))
        query = self.arg_str("q") or ""
        kind = self.arg_str("kind") or None
        include_inactive = self.arg_flag("all")
        # A list is paged (block order): a page, not 10,000 memories, is what
        # a client can use at once; `total` says how many there are.
        limit = self.arg_int("limit", 10 if query.strip() else LIST_PAGE, 1, 200 if query.strip() else LIST_MAX)
        offset = self.arg_int("offset", 0, 0, 10**9)
        raw_per_kind = self.arg_str("per_kind")
        per_kind = self.arg_int("per_kind", 0, 1, LIST_MAX) if raw_per_kind else None

        def work() -> dict[str, Any]:
            proj = self.existing(target)
            if query.strip():
                kinds = [kind] if kind else None
                result = proj.search(query, limit, include_inactive=include_inactive, kinds=kinds)
                return rest_lists.search_answer(result, self.with_plan(proj.dense_status().to_dict()))
            if per_kind is not None:
                return rest_lists.by_kind(proj, kind, include_inactive, per_kind)
            memories = proj.list(kind=kind, include_inactive=include_inactive, limit=limit, offset=offset)
            return {
                "memories": to_json(memories),
                "total": proj.count(kind=kind, include_inactive=include_inactive),
                "offset": offset,
                "revision": proj.revision(),
            }

        self.reply(await self.call(work))

    @_endpoint
    async def post(self) -> None:
        body = self.body(*RECORD_FIELDS)
        target = self.target(_get_str(body, "path"))
        statement = _get_str(body, "statement", required=True)
        kind = _get_str(body, "kind")  # default: note, or the superseded memory's kind
        topic = _get_str(body, "topic")
        handles = _get_handles(body)
        supersedes = _get_str(body, "supersedes")
        provenance = _provenance(body, target)
        private = _get_bool(body, "private")

        def work() -> dict[str, Any]:
            # The first explicit record initializes, as in every face; a refused
            # one (empty, a secret, another language, an unknown kind) must not.
            check_first_record(statement, self.core)
            from ..storage.validate import check_topic

            check_topic(topic)  # a refused topic refuses the record: before memory starts
            if kind is not None and kind not in KINDS:
                raise InvalidStatement(f"Unknown kind {kind!r}; use one of {', '.join(KINDS)}.")
            # Superseding needs a memory to replace: that is never a first record.
            proj = self.existing(target) if supersedes else init_project(target, self.core, within=self.server_root)
            # The memory itself, plus "similar": the active memories it nearly repeats.
            return to_json(
                proj.record(statement, kind, topic, handles, supersedes, provenance=provenance, private=private)
            )

        self.reply(await self.call(work), status=201)


class MemoryHandler(_Handler):
    @_endpoint
    async def get(self, memory_id: str) -> None:
        target = self.target(self.arg_str("path"))

        def work() -> dict[str, Any]:
            proj = self.existing(target)
            memory = proj.get(memory_id)
            return {"memory": to_json(memory), "history": to_json(proj.history(memory.id))}

        self.reply(await self.call(work))


class MemoryActionHandler(_Handler):
    """``POST memories/{id}/confirm | supersede | retire``."""

    @_endpoint
    async def post(self, memory_id: str, action: str) -> None:
        body = self.body(*ACTION_FIELDS[action])
        target = self.target(_get_str(body, "path"))
        if action == "confirm":

            def work() -> Any:
                return self.existing(target).confirm(memory_id, by="person")

            status = 200
        elif action == "retire":
            reason = _get_str(body, "reason")

            def work() -> Any:
                return self.existing(target).retire(memory_id, reason or None)

            status = 200
        else:  # supersede
            statement = _get_str(body, "statement", required=True)
            kind = _get_str(body, "kind")
            topic = _get_str(body, "topic")
            handles = _get_handles(body)
            provenance = _provenance(body, target)

            def work() -> Any:
                return self.existing(target).record(
                    statement, kind, topic, handles, supersedes=memory_id, provenance=provenance
                )

            status = 201
        self.reply(to_json(await self.call(work)), status=status)


class EvidenceHandler(_Handler):
    @_endpoint
    async def get(self) -> None:
        target = self.target(self.arg_str("path"))
        session = self.arg_str("session") or None
        limit = self.arg_int("limit", 64, 1, 1000)

        def work() -> dict[str, Any]:
            proj = self.existing(target)
            staged = proj.staged_evidence(session, limit)
            # Whether each one was kept as a lesson: the sidebar cannot tell from the memories
            # it lists, as a kind filter or a page may leave the lesson out.
            kept = proj.kept_as(ev.handle for ev in staged)
            return {"evidence": [{**to_json(ev), "kept_by": kept.get(ev.handle)} for ev in staged]}

        self.reply(await self.call(work))


class KeepEvidenceHandler(_Handler):
    """Turn a staged failure into a memory that cites it (the sidebar's "Keep as lesson")."""

    @_endpoint
    async def post(self, handle: str) -> None:
        body = self.body(*RECORD_FIELDS)
        target = self.target(_get_str(body, "path"))
        if _get_handles(body) not in ([], [handle]) or _get_str(body, "supersedes") is not None:
            raise BadRequest("Keeping a failure cites that failure and replaces nothing: "
                             "leave out 'evidence' and 'supersedes'.")
        statement = _get_str(body, "statement", required=True)
        kind = _get_str(body, "kind", default="failure")
        topic = _get_str(body, "topic")

        def work() -> Any:
            proj = self.existing(target)
            ev = proj.evidence(handle)
            # The lesson points at the failing cell, so the sidebar's link opens it.
            provenance = _provenance(
                body,
                target,
                notebook=ev.notebook,
                cell_id=ev.cell_id,
                execution_count=ev.execution_count,
                session=ev.session,
            )
            return proj.remember(statement, kind, topic, [ev.handle], provenance=provenance)

        self.reply(to_json(await self.call(work)), status=201)


class ShareHandler(_Handler):
    """Sharing through git on or off (the sidebar's switch); initializes memory like init."""

    @_endpoint
    async def post(self) -> None:
        body = self.body("on")
        target = self.target(_get_str(body, "path"))
        on = _get_bool(body, "on", default=True)

        def work() -> dict[str, Any]:
            report = init_project(target, self.core, within=self.server_root).share(on=on)
            return {**report.to_dict(), "status": self.status_of(target)}

        self.reply(await self.call(work))


class BlockHandler(_Handler):
    @_endpoint
    async def get(self) -> None:
        target = self.target(self.arg_str("path"))
        raw_cap = self.arg_str("cap")
        cap = self.arg_int("cap", 0, 512, 1_000_000) if raw_cap else None

        def work() -> Any:
            return to_json(self.existing(target).block(cap))

        self.reply(await self.call(work))


# The fields each POST takes besides `path` (the sidebar's IRecordRequest, src/tokens.ts).
RECORD_FIELDS = ("statement", "kind", "topic", "evidence", "supersedes", "recorder", "quote", "cell_id", "private")
ACTION_FIELDS = {
    "confirm": (),
    "retire": ("reason",),
    "supersede": ("statement", "kind", "topic", "evidence", "recorder", "quote", "cell_id"),
}

LIST_PAGE = 200  # memories per list response unless `limit` says otherwise
LIST_MAX = 10_000

_ID = r"([^/]+)"

HANDLERS: list[tuple[str, type[_Handler]]] = [
    (r"/jupymem/api/status", StatusHandler),
    (r"/jupymem/api/init", InitHandler),
    (r"/jupymem/api/memories", MemoriesHandler),
    (rf"/jupymem/api/memories/{_ID}", MemoryHandler),
    (rf"/jupymem/api/memories/{_ID}/(confirm|supersede|retire)", MemoryActionHandler),
    (r"/jupymem/api/evidence", EvidenceHandler),
    (rf"/jupymem/api/evidence/{_ID}/keep", KeepEvidenceHandler),
    (r"/jupymem/api/block", BlockHandler),
    (r"/jupymem/api/share", ShareHandler),
]


class JupymemApp(ExtensionApp):
    """The ``jupymem`` server extension: memory over authenticated REST."""

    name = "jupymem"
    description = "Per-repository memory for notebooks and their assistants, over REST."
    load_other_extensions = True

    home = Unicode(
        "",
        config=True,
        help="Memory home for this server (default: $JUPYMEM_HOME, else ~/.jupymem).",
    )
    max_body_bytes = Int(
        64 * 1024,
        config=True,
        help="Largest request body accepted, in bytes; larger ones get 413.",
    )

    database_url = Unicode(
        "",
        config=True,
        help="The team's PostgreSQL database for every repository's memory (default: $JUPYMEM_DATABASE_URL, "
        "else each repository's own SQLite file). Leave the password out: libpq reads PGPASSWORD, ~/.pgpass "
        "or a service file.",
    )

    core_settings: Settings

    def initialize_settings(self) -> None:
        settings = Settings.from_env()
        if self.home:
            settings = settings.with_(home=Path(self.home).expanduser())
        if self.database_url:
            settings = settings.with_(database_url=self.database_url)
        self.core_settings = settings
        self.log.info("jupymem: memory home %s", settings.home)
        if settings.database_url:  # shown without a password (a URL may hold one)
            from ..core.team import where
            from ..errors import JupymemError

            try:
                self.log.info("jupymem: team memory in PostgreSQL at %s", where(settings.database_url))
            except JupymemError as exc:  # psycopg missing: every request will say so too
                self.log.error("jupymem: %s", exc.message)

    def initialize_handlers(self) -> None:
        self.handlers.extend(HANDLERS)

    async def stop_extension(self) -> None:
        from ..core.opening import close_all

        close_all()
