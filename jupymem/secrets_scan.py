"""Secrets in text: find them, mask them for messages, redact them.

Everything that enters memory, and every failed cell kept as evidence, passes
through ``find_secrets``: a statement that holds one is refused
(``capture.check_statement``), an excerpt or error line has it replaced by
``[REDACTED:<kind>]``.

Detection leans towards refusing: a false alarm costs the person a
rephrasing, a miss puts a credential into a database that is exported and
shared through git. The exceptions are the shapes that notebooks are full of
and that hold no secret: a name bound to code (``token = os.environ["TOKEN"]``),
a placeholder (``password=<your password>``, ``${PASSWORD}``, ``"***"``) and
prose that merely mentions passwords or tokens.

It is cheap on the text it sees most, ordinary prose: each rule has a *hint*, a
fragment that every match of the rule must contain (``://`` for a password in a
URL, ``key`` followed by ``=`` or ``:`` for ``api_key = ...``), and the rules are
run only when their hint occurs. A hint may fire where its rule then finds
nothing, never the other way round: ``tests/test_secrets_scan.py`` checks that
the hinted scan and the full scan agree.

Stdlib only, regexes compiled at import.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ELLIPSIS", "SecretFinding", "find_secrets", "redact"]

ELLIPSIS = "…"


@dataclass(frozen=True)
class SecretFinding:
    """One secret found in a text: ``text[start:end]`` is the secret itself."""

    kind: str  # stable slug, used in ``[REDACTED:<kind>]``
    label: str  # for people: "an AWS access key"
    start: int
    end: int
    masked: str  # a preview that never holds the whole secret


def _mask(value: str) -> str:
    n = len(value)
    if n >= 16:
        return f"{value[:4]}{ELLIPSIS}{value[-4:]}"
    if n >= 10:
        return f"{value[:2]}{ELLIPSIS}{value[-2:]}"
    return f"{value[:1]}{ELLIPSIS}"


def _random_looking(value: str) -> bool:
    """Mixed letters and digits, as keys and tokens are; words and names are not."""
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return has_digit and has_alpha


# What a value looks like when it stands in for a secret instead of being one.
_PLACEHOLDER = re.compile(
    r"""^(?:
        \$\{[^}]*\}|\$\(?[A-Za-z_]\w*\)?|%\(?\w*\)?s|%[A-Za-z_]\w*%|\{\{?[^}]*\}\}?
      | <[^>]*>|\[[^\]]*\]
      | [*x.•…#?-]{3,}|x+|X+
      | (?:your|my|the|some|example|sample|dummy|fake|placeholder)?[_ -]?
        (?:password|passwd|pass|pwd|secret|token|api[_ -]?key|key|value|here|xxx+)
        (?:[_ -]?here)?
      | changeme|redacted|none|null|nil|true|false|undefined|env|getpass
    )$""",
    re.IGNORECASE | re.VERBOSE,
)


def _placeholder(value: str) -> bool:
    v = value.strip()
    return not v or bool(_PLACEHOLDER.match(v)) or "REDACTED" in v.upper()


def _literal_value(text: str, value: str, end: int, quoted: bool) -> bool:
    """True when an assigned value is a literal secret, not code or a stand-in."""
    if len(value) < 4 or _placeholder(value):
        return False
    if quoted:
        # A quoted sentence or a file name is not a credential.
        return not any(c.isspace() for c in value) and not re.fullmatch(
            r"[\w./~\\-]+\.(?:json|ya?ml|txt|cfg|ini|env|pem|key|toml|csv)|[./~].*", value
        )
    if end < len(text) and text[end] in "([.":
        return False  # a call, subscript or attribute: code, not a value
    if re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", value):
        return False  # dotted name: settings.token, os.environ
    if value[0] in "/~":
        return False  # a path
    return len(value) >= 6 and _random_looking(value)


_KEY_NAME = (
    r"(?:[A-Za-z0-9]{1,40}[_.-]){0,6}"
    r"(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|"
    r"(?:access|secret|private|account|client|signing|master)[_-]?key|client[_-]?secret|"
    r"auth[_-]?token|access[_-]?token|refresh[_-]?token|bearer[_-]?token)"
)
_VALUE = r"""(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"'`,;()\[\]{}<>]+))"""

# (kind, label, pattern, group holding the secret or None for the whole match, check)
_PATTERNS: list[tuple[str, str, re.Pattern[str], str | None, Callable[[str], bool] | None]] = [
    (
        "private-key",
        "a private key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
            r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"
        ),
        None,
        # key material, not prose that names the format: a long unbroken base64 run
        lambda v: re.search(r"[A-Za-z0-9+/=]{16,}", re.sub(r"-----[^-]+-----", "", v)) is not None,
    ),
    (
        "jwt",
        "a JSON Web Token",
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        None,
        None,
    ),
    (
        "aws-access-key",
        "an AWS access key",
        re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
        None,
        None,
    ),
    (
        "aws-secret-key",
        "an AWS secret access key",
        re.compile(
            r"(?i)\baws[_-]?secret(?:[_-]?access)?[_-]?key\b[\"']?\s*(?:=|:|=>)\s*[\"']?"
            r"(?P<v>[A-Za-z0-9/+=]{30,})"
        ),
        "v",
        None,
    ),
    (
        "github-token",
        "a GitHub token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
        None,
        None,
    ),
    (
        "anthropic-key",
        "an Anthropic API key",
        re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
        None,
        _random_looking,
    ),
    (
        "openai-key",
        "an OpenAI-style API key",
        re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
        None,
        _random_looking,
    ),
    (
        "stripe-key",
        "a Stripe secret key",
        re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
        None,
        None,
    ),
    (
        "slack-token",
        "a Slack token",
        re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
        None,
        _random_looking,
    ),
    (
        "google-api-key",
        "a Google API key",
        re.compile(r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
        None,
        None,
    ),
    (
        "huggingface-token",
        "a Hugging Face token",
        re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"),
        None,
        _random_looking,
    ),
    (
        "url-credentials",
        "a password in a URL",
        re.compile(r"(?<![\w+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s:/@]*:(?P<v>[^\s/@]+)@[^\s/@]"),
        "v",
        lambda v: not _placeholder(v),
    ),
    (
        "password",
        "a password",
        # curl -u user:password, wget --user ... --password is caught by the flag rule
        re.compile(r"(?<![\w-])(?:-u|--user)[ =]+['\"]?[^\s:'\"]+:(?P<v>[^\s'\"]+)"),
        "v",
        lambda v: not _placeholder(v),
    ),
    (
        "bearer-token",
        "a bearer token",
        re.compile(r"(?i)\bbearer\s+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)"),
        "v",
        _random_looking,
    ),
    (
        "basic-auth",
        "HTTP basic credentials",
        re.compile(r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?basic\s+(?P<v>[A-Za-z0-9+/]{8,}=*)"),
        "v",
        None,
    ),
]

_KEY_HEADER = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")

# ``password = "hunter22"``, ``"api_key": "..."``, ``API_KEY: abc123def``, ``token=...``
_ASSIGNMENT = re.compile(
    rf"(?<![\w.-])(?P<name>{_KEY_NAME})(?![\w-])[\"'\]]*"
    r"(?:\s*:\s*[A-Za-z_][\w.\[\]| ]*?(?=\s*=))?"  # a type annotation: password: str = ...
    rf"\s*(?:==?|:=?|=>)\s*{_VALUE}",
    re.IGNORECASE,
)
# ``--password hunter2``, ``--api-key=abc123...``
_FLAG = re.compile(rf"(?<![\w-])--?(?P<name>{_KEY_NAME})(?:=|\s+){_VALUE}", re.IGNORECASE)
# ``the password is hunter2``
_PROSE = re.compile(
    rf"(?i)\b(?P<name>password|passwd|passphrase)\s+(?:is|was|=)\s+{_VALUE}",
)


# What every match of a rule must contain, kept beside the rules they guard: a rule
# added above needs its fragment here too, or tests/test_secrets_scan.py fails for it.
# The folded fragments are lowercase and stand for rules that ignore case.
_CASED = (
    r"-----BEGIN |eyJ|AKIA|ASIA|gh[pousr]_|github_pat_|sk-|[sr]k_(?:live|test)_|xox[abprs]-|AIza|hf_"
    r"|://|(?:-u|--user)[ =]"
)
_FOLDED = r"aws[_-]?secret|bearer\s|authorization"
_NAME_END = r"(?:pass(?:word|wd|phrase)|secret|token|key)"  # how every _KEY_NAME ends
_GENERIC = (
    rf"{_NAME_END}[\"'\]]*\s*[:=]"  # _ASSIGNMENT: the name, then = or :
    rf"|--?{_KEY_NAME}[=\s]"  # _FLAG
    r"|pass(?:word|wd|phrase)\s"  # _PROSE
)
# ASCII text is lowercased once and searched case-sensitively (several times faster);
# other text is searched with the rules' own case folding, in which ``ſ`` is an ``s``.
_CASED_HINT, _FOLDED_HINT, _GENERIC_HINT = re.compile(_CASED), re.compile(_FOLDED), re.compile(_GENERIC)
_SPECIFIC_ANY_CASE = re.compile(rf"{_CASED}|(?i:{_FOLDED})")
_GENERIC_ANY_CASE = re.compile(_GENERIC, re.IGNORECASE)


def _hints(text: str) -> tuple[bool, bool]:
    """Whether the specific rules, and the generic ``name = value`` rules, could match."""
    if text.isascii():
        low = text.lower()
        specific = _CASED_HINT.search(text) is not None or _FOLDED_HINT.search(low) is not None
        return specific, _GENERIC_HINT.search(low) is not None
    return _SPECIFIC_ANY_CASE.search(text) is not None, _GENERIC_ANY_CASE.search(text) is not None


def _label_for(name: str) -> tuple[str, str]:
    low = name.lower()
    if "pass" in low:
        return "password", "a password"
    if "token" in low:
        return "token", "a token"
    if "key" in low:
        return "api-key", "an API key or secret key"
    return "secret", "a secret"


def find_secrets(text: str) -> list[SecretFinding]:
    """Every secret in ``text``, in order, without overlaps.

    Specific shapes (an AWS key, a GitHub token) win over the generic
    ``name = value`` rule when both match the same characters.
    """
    if not text:
        return []
    specific, generic = _hints(text)
    if not (specific or generic):
        return []  # most prose: no rule could match
    return _scan(text, specific=specific, generic=generic)


def _scan(text: str, *, specific: bool = True, generic: bool = True) -> list[SecretFinding]:
    """The rules themselves; ``find_secrets`` skips a group whose hint is absent."""
    found: list[SecretFinding] = []

    def add(kind: str, label: str, start: int, end: int) -> None:
        if start >= end or any(start < f.end and f.start < end for f in found):
            return
        value = text[start:end]
        # A key block's header says what it is and holds nothing secret.
        header = _KEY_HEADER.match(value) if kind == "private-key" else None
        masked = header.group() + ELLIPSIS if header else _mask(value)
        found.append(SecretFinding(kind, label, start, end, masked))

    for kind, label, pattern, group, check in _PATTERNS if specific else ():
        for m in pattern.finditer(text):
            start, end = m.span(group) if group is not None else m.span()
            if check is None or check(text[start:end]):
                add(kind, label, start, end)

    for pattern in (_ASSIGNMENT, _FLAG, _PROSE) if generic else ():
        for m in pattern.finditer(text):
            group = next(g for g in ("dq", "sq", "bare") if m.group(g) is not None)
            value = m.group(group)
            start, end = m.span(group)
            if _literal_value(text, value, end, quoted=group != "bare"):
                kind, label = _label_for(m.group("name"))
                add(kind, label, start, end)

    found.sort(key=lambda f: f.start)
    return found


def redact(text: str) -> str:
    """``text`` with every secret replaced by ``[REDACTED:<kind>]``."""
    out = text
    for f in reversed(find_secrets(text)):
        out = f"{out[:f.start]}[REDACTED:{f.kind}]{out[f.end:]}"
    return out
