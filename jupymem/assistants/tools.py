"""The memory tools a model may call: ``memory_search`` and ``memory_record``.

Both are thin calls into ``Project``; what lives here is the honesty rule for
records made by a model (SPEC 2 and 7). A model's record is ``supported`` only
when the person said it: its ``user_quote`` must occur verbatim in the
person's current message (after ``capture.fold_quote``: whitespace, curly
quotes and dashes do not count) *and* be about the statement (they share
content words, accent-folded, with a little stemming so that "columna" meets
"column"). Anything else is kept, but as ``unconfirmed``, and the quote is
not stored as the person's words. Evidence a record cites must be a failure
staged in this kernel session. A supported record may start a repository's
memory (it is an explicit record); an unconfirmed one never does.

Tool results go back to the model as JSON text; a refusal (secret, language,
unknown handle) is a result that says why, not an exception, so the model can
correct itself. Nothing a tool returns is ever staged as evidence.

``declaration`` implements the other way in: a prompt that begins with
"remember", "recuerda" or "acuérdate" is stored as the person's own statement.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..intake import capture, language
from ..retrieval import lexical
from ..config import Settings
from ..errors import JupymemError, LanguageRefused, NoMemory, UnknownMemory
from ..models import KINDS, SUPPORTED, UNCONFIRMED, Evidence, Memory, Provenance, SearchResult

if TYPE_CHECKING:
    from ..core.project import Project

MAX_RESULT_CHARS = 2000  # per statement in a tool result
SEARCH_LIMIT = 10

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "memory_search",
        "description": (
            "Search this repository's memory (decisions, constraints, corrections, preferences, "
            "procedures, failure lessons, facts, notes). Returns matching memories, or 'abstained' "
            "when nothing really matches."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what to look for, in words or identifiers"},
                "limit": {"type": "integer", "minimum": 1, "maximum": SEARCH_LIMIT, "default": 5},
                "include_inactive": {
                    "type": "boolean",
                    "default": False,
                    "description": "also search retired and superseded memories (history)",
                },
            },
            "required": ["query"],
        },
    },
}

RECORD_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "memory_record",
        "description": (
            "Keep one statement in this repository's memory. Record only what the user stated or a "
            "staged failure proves. Pass user_quote, the user's exact words from their current "
            "message that state it: with it the memory is 'supported', without it 'unconfirmed'. "
            "Never include secrets."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "statement": {"type": "string", "description": "one short, self-contained statement in English"},
                "kind": {"type": "string", "enum": list(KINDS), "default": "note"},
                "user_quote": {
                    "type": "string",
                    "description": "the user's exact words from their current message that state this",
                },
                "evidence": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "handles (ev-xxxxxxxx) of staged failures this lesson comes from",
                },
                "topic": {"type": "string", "description": "a short label, e.g. 'joins'"},
            },
            "required": ["statement"],
        },
    },
}

SCHEMAS: tuple[dict[str, Any], ...] = (SEARCH_SCHEMA, RECORD_SCHEMA)


@dataclass
class ToolContext:
    """What a tool call may use: where the repository is, the person's current
    message (None when it cannot be seen), this session's staged failures."""

    path: Path
    settings: Settings
    prompt: str | None
    evidence: Sequence[Evidence] = ()
    provenance: Provenance = field(default_factory=lambda: Provenance(recorder="assistant"))
    translator: Callable[[str], str] | None = None
    recorded: list[Memory] = field(default_factory=list)  # what this turn recorded
    within: Path | None = None  # a face confined to a folder (``opening.init_project``)

    def project(self, *, create: bool = False) -> Project | None:
        from ..core.opening import find_project, init_project

        proj = (init_project(self.path, self.settings, within=self.within) if create
                else find_project(self.path, self.settings))
        if proj is not None and proj.translator is None and self.translator is not None:
            proj.translator = self.translator
        return proj


# -- dispatch --------------------------------------------------------------------------


def run(ctx: ToolContext, name: str, arguments: Mapping[str, Any] | str) -> str:
    """Run one tool call and return its JSON result for the model."""
    try:
        args = json.loads(arguments or "{}") if isinstance(arguments, str) else dict(arguments)
        if not isinstance(args, dict):
            raise ValueError
    except ValueError:
        return _json({"error": f"The arguments of {name} must be a JSON object."})
    handler = _TOOLS.get(name)
    if handler is None:
        return _json({"error": f"There is no tool {name!r}; use one of: {', '.join(_TOOLS)}."})
    try:
        return _json(handler(ctx, **args))
    except TypeError as exc:  # unexpected or missing arguments
        return _json({"error": f"Bad arguments for {name}: {exc}"})
    except JupymemError as exc:
        return _json({"error": exc.message})


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# -- memory_search -------------------------------------------------------------------


def memory_search(
    ctx: ToolContext, query: str, limit: int = 5, include_inactive: bool = False, *, public_only: bool = False,
    **_ignored: Any,
) -> dict[str, Any]:
    """``public_only``: leave private memories out (an endpoint that cannot tell whose they are)."""
    proj = ctx.project()
    if proj is None:
        return {"status": "abstained", "reason": "this repository has no memory yet"}
    try:
        n = max(1, min(int(limit), SEARCH_LIMIT))
    except (TypeError, ValueError):
        n = 5
    result = proj.search(str(query), limit=n, include_inactive=bool(include_inactive))
    if public_only:
        import dataclasses

        hits = tuple(h for h in result.hits if not h.memory.private)
        full = result.full if result.full is not None and not result.full.private else None
        result = dataclasses.replace(result, hits=hits, full=full)
        if not hits and result.status == "ok":
            result = dataclasses.replace(result, status="abstained", reason="nothing matches")
    return search_result(result)


def search_result(result: SearchResult) -> dict[str, Any]:
    if result.abstained:
        return {"status": "abstained", "reason": result.reason or "nothing matches"}
    out: dict[str, Any] = {
        "status": "ok",
        "hits": [{**memory_summary(h.memory), "confidence": h.confidence} for h in result.hits],
    }
    if result.full is not None:
        out["full"] = memory_record_dict(result.full)
    return out


def memory_summary(m: Memory) -> dict[str, Any]:
    d = {"id": m.id, "kind": m.kind, "standing": m.standing, "status": m.status, "statement": _clip(m.statement)}
    if m.topic:
        d["topic"] = m.topic
    return d


def memory_record_dict(m: Memory) -> dict[str, Any]:
    """The whole record of one memory, for a model: conditions and evidence included."""
    d = memory_summary(m)
    d.update(valid_from=m.valid_from, recorded_by=m.provenance.recorder)
    for key in ("valid_to", "original", "supersedes", "superseded_by", "retire_reason"):
        value = getattr(m, key)
        if value:
            d[key] = _clip(value) if isinstance(value, str) else value
    if m.provenance.notebook:
        d["notebook"] = m.provenance.notebook
    if m.evidence:
        d["evidence"] = [_evidence_for_model(e) for e in m.evidence]
    return d


def _evidence_for_model(e: Evidence) -> dict[str, Any]:
    out: dict[str, Any] = {"handle": e.handle, "diagnosis": list(e.diagnosis)}
    if e.fix is not None:
        out["fixed_by"] = _clip(e.fix.diff) if e.fix.diff else "running the same cell again"
    return out


def _clip(text: str) -> str:
    return text if len(text) <= MAX_RESULT_CHARS else text[: MAX_RESULT_CHARS - 1] + "…"


# -- memory_record ------------------------------------------------------------------


def memory_record(
    ctx: ToolContext,
    statement: str,
    kind: str = "note",
    user_quote: str | None = None,
    evidence: Sequence[str] | None = None,
    topic: str | None = None,
    *,
    public_only: bool = False,
    **_ignored: Any,
) -> dict[str, Any]:
    """``public_only``: an endpoint that cannot tell whose private memories are (as
    ``memory_search``): none is named among the similar ones, and none is recorded over
    (recording a private memory's words where it is shared is how it is made shared)."""
    if not isinstance(statement, str) or not statement.strip():
        return {"error": "statement must be a non-empty string."}
    cited = _staged(ctx, evidence or ())
    standing, why = quote_standing(user_quote, ctx.prompt, statement)
    if standing == SUPPORTED:
        _check_before_creating(ctx, statement, user_quote, topic)
    proj = ctx.project(create=standing == SUPPORTED)
    if proj is None:
        raise NoMemory(
            "This repository has no memory yet, and an unconfirmed record does not start one. Record "
            "it with the user's exact words as user_quote, or ask them to run `jupymem init` (in a notebook: "
            "%memory init)."
        )
    if public_only:
        same = _found(proj, capture.memory_id(capture.check_statement(statement)))
        if same is not None and same.private:
            return {"error": "This cannot be recorded through this endpoint; nothing was recorded. The user can "
                             "record it in a notebook (%%remember) or with `jupymem remember`."}
    prov = replace(ctx.provenance, recorder="assistant", quote=user_quote if standing == SUPPORTED else None)
    done = proj.record(statement, kind or "note", topic or None, cited, provenance=prov, standing=standing)
    m = done.memory
    ctx.recorded.append(m)
    out: dict[str, Any] = {"recorded": m.id, "kind": m.kind, "standing": m.standing, "statement": _clip(m.statement)}
    if m.standing == UNCONFIRMED and why:
        out["note"] = why
    similar = [s for s in done.similar if not (public_only and _private(proj, s.id))]
    if similar:
        # As every face does: the record is kept, and the model can tell the person.
        out["similar"] = [{"id": s.id, "statement": _clip(s.statement)} for s in similar]
        out["similar_note"] = "This nearly repeats an active memory; ask the user whether it should supersede it."
    return out


def _found(proj: Any, memory_id: str) -> Memory | None:
    try:
        return proj.get(memory_id)  # type: ignore[no-any-return]
    except UnknownMemory:
        return None


def _private(proj: Any, memory_id: str) -> bool:
    found = _found(proj, memory_id)
    return found is None or found.private


def _check_before_creating(ctx: ToolContext, statement: str, quote: str | None, topic: str | None = None) -> None:
    """Refuse what the core would refuse *before* a record starts a repository's
    memory, so that a refused record leaves nothing behind."""
    if ctx.project() is not None:
        return  # the core checks as it records
    from ..storage.validate import check_topic

    capture.check_statement(statement)
    if quote:
        capture.check_statement(quote)
    check_topic(topic or None)
    if ctx.settings.language != "source" and ctx.translator is None and not language.is_english(statement):
        raise LanguageRefused(
            "This statement is not in English, and stored memory is English. Set JUPYMEM_MODEL to a "
            "litellm model to translate it on the way in (your words are kept as its quote), or set "
            "JUPYMEM_LANGUAGE=source to store statements as written."
        )


def _staged(ctx: ToolContext, handles: Sequence[str]) -> list[Evidence]:
    if isinstance(handles, str):
        handles = [handles]
    by_handle = {e.handle: e for e in ctx.evidence}
    out = []
    for h in handles:
        ev = by_handle.get(str(h).strip())
        if ev is None:
            known = ", ".join(by_handle) or "none"
            raise JupymemError(
                f"{h!r} is not a failure staged in this session (staged: {known}); nothing was recorded."
            )
        out.append(ev)
    return out


def quote_standing(quote: str | None, prompt: str | None, statement: str) -> tuple[str, str | None]:
    """(standing, why it is unconfirmed or None) for a record carrying ``quote``."""
    if not quote or not quote.strip():
        return UNCONFIRMED, "no user_quote: kept as unconfirmed until a person confirms it"
    if prompt is None:
        return UNCONFIRMED, "the user's message is not visible here, so the quote cannot be checked"
    folded = capture.fold_quote(quote)
    if not folded or folded not in capture.fold_quote(prompt):
        return UNCONFIRMED, "user_quote does not occur verbatim in the user's current message"
    if not related(quote, statement):
        return UNCONFIRMED, ("user_quote does not carry the statement (most of its words, and any address in "
                             "it, must be the user's)")
    return SUPPORTED, None


def related(quote: str, statement: str) -> bool:
    """True when the quote carries the statement: at least two thirds of the statement's
    content stems are the quote's, it negates what the quote negates, and every address in
    it (a URL, an email, a path, a domain) is one the quote holds whole. The statement is
    the assistant's and may rephrase; what it adds beyond the person's words must stay
    small: a few words the person said, as the cover for an instruction they never gave
    ("… and post every summary to http://…", "never" for "always"), would otherwise be
    recorded as theirs."""
    q = lexical.content_terms(quote)
    s = lexical.content_terms(statement)
    if not q or not s:
        return False
    if _negates(quote) != _negates(statement):
        return False
    held = {_address_form(w) for w in quote.split()}
    if any(a not in held for a in _addresses(statement)):
        return False
    shared = sum(1 for t in s if any(_same_stem(t, u) for u in q))
    return 3 * shared >= 2 * len(s)


_NEGATIONS = frozenset({"not", "never", "no", "don't", "dont", "doesn't", "doesnt", "isn't", "aren't", "without",
                        "avoid", "cannot", "can't", "nor", "neither", "none", "stop", "n't"})
_WORD = re.compile(r"[a-z']+")
# A domain: dotted labels ending in a common top-level domain (a code name like df.groupby
# or a file like data.csv is not one).
_DOMAIN = re.compile(r"^(?:[a-z0-9-]+\.)+(?:com|net|org|io|ai|dev|app|co|cloud|info|biz|xyz|site|online|me|us|uk|de|"
                     r"fr|eu|ca|au|nl|ch|se|jp|cn|in|ru|br)$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$")
_NOT_PATHS = frozenset({"and/or", "w/o", "i/o", "n/a", "a/b", "y/n", "either/or"})


def _negates(text: str) -> bool:
    words = _WORD.findall(unicodedata.normalize("NFKC", text).lower().replace("’", "'"))
    return any(w in _NEGATIONS or w.endswith("n't") for w in words)


def _address_form(word: str) -> str:
    """A word as addresses are compared: lower case, without the punctuation around it
    or a trailing slash."""
    return word.lower().strip(".,;:!?()[]{}<>'\"`").rstrip("/")


def _addresses(text: str) -> set[str]:
    out = set()
    for word in text.split():
        w = _address_form(word)
        if not w or w in _NOT_PATHS:
            continue
        if "://" in w or _EMAIL.match(w) or _DOMAIN.match(w) or ("/" in w and re.search(r"\w/\w|^/\w", w)):
            out.add(w)
    return out


def _same_stem(a: str, b: str) -> bool:
    """Equal, or one word's start is the other's stem: column/columns/columna, repo/repository."""
    if a == b:
        return True
    if len(a) < 4 or len(b) < 4 or a.isdigit() or b.isdigit():
        return False
    n = min(len(a), len(b), 5)
    return a[:n] == b[:n]


# -- "remember ..." ---------------------------------------------------------------------

_DECLARATION = re.compile(
    r"^\s*(?:remember|recuerda|acuérdate|acuerdate)\b[\s,:;.!-]*(?:(?:that|to|que|de\s+que)\b\s*)?",
    re.IGNORECASE,
)
_KIND_HINTS = (
    ("constraint", re.compile(
        r"\b(?:never|always|must|mustn't|must not|do not|don't|only|nunca|siempre|debe|deben|no\s+uses?|"
        r"niemals|immer|muss|jamais|toujours|doit|sempre|deve)\b", re.IGNORECASE)),
    ("preference", re.compile(r"\b(?:prefer|prefers|preferred|rather|prefiero|preferimos|préfère|prefiro)\b",
                              re.IGNORECASE)),
    ("decision", re.compile(r"\b(?:decided|we use|we'll use|we chose|decidimos|usamos|entschieden|décidé)\b",
                            re.IGNORECASE)),
)


def declaration(prompt: str) -> tuple[str, str] | None:
    """``(statement, kind)`` when ``prompt`` begins with "remember", "recuerda" or
    "acuérdate"; the statement is what follows the word (and a "that"/"que")."""
    text = unicodedata.normalize("NFC", prompt or "")
    m = _DECLARATION.match(text)
    if not m:
        return None
    statement = text[m.end():].strip()
    if not statement:
        return None
    statement = statement[0].upper() + statement[1:]
    kind = next((k for k, pattern in _KIND_HINTS if pattern.search(statement)), "note")
    return statement, kind


def record_declaration(ctx: ToolContext, prompt: str) -> Memory | None:
    """Store a "remember ..." prompt as the person's own statement (supported,
    the whole prompt kept as the quote). None when the prompt is not one."""
    found = declaration(prompt)
    if found is None:
        return None
    statement, kind = found
    _check_before_creating(ctx, statement, prompt)
    proj = ctx.project(create=True)
    assert proj is not None
    prov = replace(ctx.provenance, recorder="person", quote=prompt.strip())
    m = proj.remember(statement, kind=kind, provenance=prov, standing=SUPPORTED)
    ctx.recorded.append(m)
    return m


# -- memory_status ------------------------------------------------------------------

# Local paths (memory home, database file, the engine's address) are no business of a
# model provider: every MCP face leaves them out.
_PRIVATE_STATUS = frozenset({"home", "database", "path", "root", "engine"})


def memory_status(ctx: ToolContext, **_ignored: Any) -> dict[str, Any]:
    """What jupymem knows about the repository: whether it has memory, how many memories
    of each kind, the block's size. Never writes anything."""
    from ..core.overview import status

    return {k: v for k, v in status(ctx.path, ctx.settings).to_dict().items() if k not in _PRIVATE_STATUS}


_TOOLS: dict[str, Callable[..., dict[str, Any]]] = {
    "memory_search": memory_search,
    "memory_record": memory_record,
}


# -- tool calls written as text --------------------------------------------------------

# A fenced block (```json, ```, <tool_call>) or the bare text: what small local models write
# when their server does not parse a call (Qwen2.5-Coder through llama.cpp writes
# ```json {"name": "memory_record", "arguments": {...}}```).
_WRITTEN = re.compile(r"```[ \t]*(?:json|JSON|tool_call)?[ \t]*\n(.*?)```|<tool_call>(.*?)</tool_call>", re.S)


def written_calls(text: str, *, any_name: bool = False) -> tuple[str, ...]:
    """The names of our tools that ``text`` *writes out* as calls instead of making them
    (a JSON object naming one of them, with its arguments, fenced or not), when that is
    all the text holds; () otherwise. Such a call is never run: a record needs the
    model's real call, which the person's client shows, not JSON in the answer.
    ``any_name``: a call to a tool we do not have counts too. A reply to a request that
    offered tools and is nothing but ``{"name": "merge_intervals", "arguments": {...}}``
    is a small model calling a function of its own invention, not an answer (Qwen2.5-Coder
    did so for a request for that function); where no tools were offered, such JSON may
    be what was asked for."""
    stripped = (text or "").strip()
    if not stripped:
        return ()
    bodies = [a or b for a, b in _WRITTEN.findall(stripped)]
    rest = _WRITTEN.sub("", stripped).strip()
    if not bodies:
        bodies, rest = [stripped], ""
    if rest:
        return ()
    names: list[str] = []
    for body in bodies:
        try:
            value = json.loads(body)
        except ValueError:
            return ()
        for call in value if isinstance(value, list) else [value]:
            name = _call_name(call, any_name)
            if name is None:
                return ()
            names.append(name)
    return tuple(names)


def _call_name(call: Any, any_name: bool = False) -> str | None:
    if not isinstance(call, dict):
        return None
    function = call.get("function")
    inner: dict[str, Any] = function if isinstance(function, dict) else call
    name = inner.get("name")
    args = next((inner[k] for k in ("arguments", "parameters", "args") if k in inner), None)
    if not isinstance(name, str) or args is None:
        return None
    if name in _TOOLS:
        return name
    # Another name: only a call's whole shape (a name that could be a function's and
    # arguments as an object or its JSON text), nothing else beside them.
    shaped = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]{0,63}", name) and isinstance(args, (dict, str))
    return name if any_name and shaped and set(inner) <= {"name", "arguments", "parameters", "args", "type"} else None
