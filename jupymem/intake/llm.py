"""Language models, through litellm: the only module that imports it.

``import litellm`` takes seconds, so it happens here, lazily, on the first
``%%ask`` or the first translation, never when the extension loads. By default
litellm fetches a remote price map at import time; jupymem sets
``LITELLM_LOCAL_MODEL_COST_MAP=True`` first (unless the person set it
otherwise), so the only network traffic is the request the person asked for.
Credentials are whatever the provider's own environment variables say
(``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY`` ...): jupymem never reads, stores or
passes them.

Every failure of the model call is turned into ``ModelError`` here, with a
message that says what to do; a missing litellm is ``MissingDependency``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from ..config import Settings
from ..errors import MissingDependency, ModelError
from ..models import Evidence
from .capture import redact

__all__ = ["Reply", "ToolCall", "complete", "translate", "translator_for", "load", "suggest_lesson"]

TRANSLATE_PROMPT = (
    "Translate the user's message into English. It is a statement to be kept in a project's memory. "
    "Answer with the English translation only: the same meaning in one or a few plain sentences, "
    "nothing added, nothing left out, no quotes, no notes. Keep code, identifiers, column and "
    "file names, numbers and units exactly as written."
)

_litellm: Any = None


def load() -> Any:
    """Import litellm once, offline-safe. Raises MissingDependency when absent."""
    global _litellm
    if _litellm is not None:
        return _litellm
    # Must be set before the import: litellm reads it while importing.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError:
        raise MissingDependency(
            "Talking to a language model needs litellm: pip install 'litellm>=1.83.7'"
        ) from None
    # No "Give feedback / get help" banners in the notebook on errors; no
    # callbacks, telemetry or logging integrations unless the person adds them.
    litellm.suppress_debug_info = True
    if hasattr(litellm, "telemetry"):
        litellm.telemetry = False
    _litellm = litellm
    return litellm


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text, as the model wrote it

    def to_message(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(frozen=True)
class Reply:
    text: str
    tool_calls: tuple[ToolCall, ...] = ()

    def message(self) -> dict[str, Any]:
        """The assistant message to send back with the tool results."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            msg["tool_calls"] = [c.to_message() for c in self.tool_calls]
        return msg


def complete(
    model: str,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None = None,
    stream: bool = True,
    *,
    on_text: Callable[[str], None] | None = None,
    **kw: Any,
) -> Reply:
    """One chat completion. With ``stream`` the text arrives piece by piece in
    ``on_text``; either way the whole reply (text and tool calls) is returned.

    ``kw`` goes to ``litellm.completion`` as is (``temperature``, ``api_base``,
    and in tests ``mock_response``).
    """
    litellm = load()
    # A provider that does not take a parameter (tool_choice, temperature ...) gets the
    # request without it instead of failing it.
    kw.setdefault("drop_params", True)
    params: dict[str, Any] = {"model": model, "messages": list(messages), "stream": stream, **kw}
    if tools:
        params["tools"] = list(tools)
    try:
        response = litellm.completion(**params)
        if stream:
            return _collect(response, on_text)
        return _whole(response, on_text)
    except Exception as exc:
        if not _from_the_client(exc):
            raise  # a bug here, not the model's answer: let it show
        raise _model_error(model, exc) from None


def _from_the_client(exc: BaseException) -> bool:
    return any(cls.__module__.split(".")[0] in ("litellm", "openai", "httpx") for cls in type(exc).__mro__)


def _whole(response: Any, on_text: Callable[[str], None] | None) -> Reply:
    message = response.choices[0].message
    text = message.content or ""
    if text and on_text:
        on_text(text)
    calls = tuple(
        ToolCall(c.id or f"call_{i}", c.function.name or "", c.function.arguments or "")
        for i, c in enumerate(getattr(message, "tool_calls", None) or ())
    )
    return Reply(text, calls)


def _collect(chunks: Iterable[Any], on_text: Callable[[str], None] | None) -> Reply:
    """Assemble a streamed reply: text deltas in order, tool calls by index."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        choices = getattr(chunk, "choices", None) or ()
        if not choices:
            continue
        delta = choices[0].delta
        piece = getattr(delta, "content", None)
        if piece:
            text.append(piece)
            if on_text:
                on_text(piece)
        for i, call in enumerate(getattr(delta, "tool_calls", None) or ()):
            index = call.index if getattr(call, "index", None) is not None else i
            slot = calls.setdefault(index, {"id": "", "name": "", "arguments": []})
            if call.id:
                slot["id"] = call.id
            fn = call.function
            if fn is not None:
                if fn.name:
                    slot["name"] = fn.name
                if fn.arguments:
                    slot["arguments"].append(fn.arguments)
    tool_calls = tuple(
        ToolCall(slot["id"] or f"call_{index}", slot["name"], "".join(slot["arguments"]))
        for index, slot in sorted(calls.items())
    )
    return Reply("".join(text), tool_calls)


def translate(text: str, model: str, **kw: Any) -> str:
    """``text`` in English, by ``model``: the translation only, no commentary."""
    reply = complete(
        model,
        [{"role": "system", "content": TRANSLATE_PROMPT}, {"role": "user", "content": text}],
        stream=False,
        **{"temperature": 0, **kw},
    )
    out = _strip_wrapping(reply.text)
    if not out:
        raise ModelError(f"The model {model} gave no translation; the statement was not stored. Try again.")
    return out


def _strip_wrapping(text: str) -> str:
    """Remove what models add around a translation despite being asked not to."""
    out = (text or "").strip()
    for prefix in ("English translation:", "Translation:", "English:"):
        if out.lower().startswith(prefix.lower()):
            out = out[len(prefix):].strip()
    pairs = {'"': '"', "'": "'", "“": "”", "«": "»", "`": "`"}
    if len(out) >= 2 and out[0] in pairs and out[-1] == pairs[out[0]] and out.count(out[0]) <= 2:
        out = out[1:-1].strip()
    return out


LESSON_PROMPT = (
    "A notebook cell failed and a later run made it work. Write the lesson a data scientist on this "
    "project should remember from it, as one plain English sentence stated as a fact or a rule about "
    "this project's code or data (for example: The sales extract names the key customer_id, never "
    "custid). Name the error and what the fix changed; write code, column names and paths exactly as "
    "they appear, in backticks. Answer with the sentence only."
)
MAX_LESSON_CHARS = 400


def suggest_lesson(evidence: Evidence, model: str, **kw: Any) -> str:
    """A one-sentence lesson for a failure and its fix, written by ``model`` from the
    redacted pair (``pairing.to_prompt``: diagnosis, excerpt, diff). Redacted again,
    on one line, clipped. Raises ModelError when the model fails or says nothing."""
    from .pairing import to_prompt

    reply = complete(
        model,
        [{"role": "system", "content": LESSON_PROMPT}, {"role": "user", "content": to_prompt(evidence)}],
        stream=False,
        **{"temperature": 0, **kw},
    )
    text = " ".join(_strip_wrapping(reply.text).split())
    if len(text) > MAX_LESSON_CHARS:
        text = text[: MAX_LESSON_CHARS - 1].rstrip() + "…"
    if not text:
        raise ModelError(f"The model {model} suggested no lesson for {evidence.handle}.")
    return redact(text)


def translator_for(settings: Settings, **kw: Any) -> Callable[[str], str] | None:
    """What ``Project.translator`` should be under ``settings``: a function that
    translates with the configured model, or None when no model is set (the core
    then refuses non-English statements with a message naming JUPYMEM_MODEL).
    Calling it is what imports litellm, so setting it costs nothing."""
    if not settings.model:
        return None
    return partial(translate, model=settings.model, **kw)


# -- errors -----------------------------------------------------------------------

_HINTS = (
    # (litellm exception class names, what to say); first match wins.
    (("AuthenticationError", "CallerCredentialAuthenticationError", "PermissionDeniedError"),
     "the provider refused the credentials. Set its API key in the environment the kernel "
     "was started from (e.g. OPENAI_API_KEY, ANTHROPIC_API_KEY) and restart the kernel."),
    (("LiteLLMUnknownProvider",),
     "litellm cannot tell which provider serves it. Write the model as provider/name, "
     "e.g. openai/gpt-4o-mini or anthropic/claude-3-5-haiku-latest."),
    (("ContextWindowExceededError",),
     "the request is longer than the model accepts. Shorten the prompt or use %%ask --no-memory."),
    (("NotFoundError",),
     "the provider does not know this model. Check the name (litellm's provider/name form)."),
    (("RateLimitError", "CallerCredentialRateLimitError"),
     "the provider is rate limiting. Wait a moment and ask again."),
    (("Timeout", "APIConnectionError"),
     "it could not be reached. Check the network, or the api base (OPENAI_BASE_URL ...) for a local server."),
    (("ServiceUnavailableError", "BadGatewayError", "InternalServerError", "MidStreamFallbackError"),
     "the provider had a server error. Ask again in a moment."),
)


# What providers' clients say when no key was given at all (the OpenAI client's "Missing
# credentials", Anthropic's "Missing Anthropic API Key", Gemini's "Missing Gemini API key"...).
# litellm files the first under InternalServerError, so without this a missing key read as
# "the provider had a server error".
_NO_KEY = re.compile(
    r"missing (?:\w+ )?(?:credentials|api[ _]?key|auth)|no (?:api[ _]?)?key (?:is )?set|api_key client option must be set",
    re.IGNORECASE,
)


def _missing_key(model: str, detail: str) -> ModelError | None:
    """A ModelError naming the setting when the call failed because no key is set, else None."""
    if not _NO_KEY.search(detail):
        return None
    try:  # which variables this provider reads (litellm knows; nothing is sent)
        wanted = list(load().validate_environment(model=model).get("missing_keys") or [])
    except Exception:  # an unknown provider: the message below still says what is missing
        wanted = []
    names = " or ".join(wanted) if wanted else "the provider's API key variable (e.g. OPENAI_API_KEY)"
    return ModelError(
        f"The model {model} failed: no API key is set for its provider. Set {names} in the environment "
        f"the kernel was started from and restart the kernel. ({detail})"
    )


def _model_error(model: str, exc: BaseException) -> ModelError:
    names = {cls.__name__ for cls in type(exc).__mro__}
    detail = redact(_first_line(getattr(exc, "message", None) or str(exc)))
    missing = _missing_key(model, detail)
    if missing is not None:
        return missing
    if "LLM Provider NOT provided" in detail:
        names.add("LiteLLMUnknownProvider")
    if "connection error" in detail.lower():  # litellm reports these as InternalServerError
        names = {"APIConnectionError"}
    for classes, hint in _HINTS:
        if names.intersection(classes):
            return ModelError(f"The model {model} failed: {hint} ({detail})")
    return ModelError(f"The model {model} failed: {detail or type(exc).__name__}")


def _first_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    if line.startswith("litellm."):  # "litellm.AuthenticationError: AuthenticationError: OpenAIException - ..."
        line = line.split(" - ", 1)[-1] if " - " in line else line
    return line if len(line) <= limit else line[: limit - 1] + "…"


def arguments(call: ToolCall) -> dict[str, Any]:
    """A tool call's arguments as a dict; raises ValueError when they are not a JSON object."""
    raw = call.arguments.strip() or "{}"
    value = json.loads(raw)
    if not isinstance(value, dict):
        raise ValueError("tool arguments must be a JSON object")
    return value
