"""Secrets in text: find them, mask them for messages, redact them.

Everything that enters memory (every free-text field of every event, see
``validate``), and every failed cell kept as evidence, passes through
``find_secrets``: a field that holds one is refused, an excerpt or error line
has it replaced by ``[REDACTED:<kind>]``.

What it knows comes from the token formats that gitleaks' rule set documents
(``config/gitleaks.toml``): the keyed prefixes that providers put on their
tokens (``glpat-``, ``npm_``, ``SG.``, ``dapi``, ``GOCSPX-`` ...), which make a
token recognisable wherever it is written, plus a few shapes of our own for the
way people write in notebooks: a ``name = value`` assignment, a command-line
flag, and prose ("the AWS secret access key is ...").

Some secrets are told by what stands next to them, not by their letters: the
secret half of an AWS key pair (40 characters of base64 within two lines after
an access key id), a Twilio auth token after its account SID, and passwords. A
plain word ("marmalade") is a password only where the syntax says so: an
environment variable (``PGPASSWORD=``, ``DB_PASS=``), a ``--password=`` flag,
a connection string's setting (``;Password=...;``, libpq's ``password=``), a
netrc entry, a .pgpass line, a line of a configuration file, a client's ``-p``,
or a sentence that ends with it ("the password is marmalade.") where it does not
read as English. Key files in every format (PEM, PGP, SSH2, PuTTY) are one
finding each, over all their lines. The rules read the text with the line breaks
of a string literal (``\n``) made real ones, so that a file pasted into a Python
or JSON string is read as the file.

Detection leans towards refusing: a false alarm costs the person a
rephrasing, a miss puts a credential into a database that is exported and
shared through git. The exceptions are the shapes that notebooks are full of
and that hold no secret: a name bound to code (``token = os.environ["TOKEN"]``),
a placeholder (``password=<your password>``, ``${PASSWORD}``, ``"***"``), prose
that merely mentions passwords or tokens, and identifiers, hashes and paths
(``tests/test_secret_shapes.py`` holds a corpus of them that must stay clean).

It is cheap on the text it sees most, ordinary prose: every rule has *hints*,
literal fragments one of which every match of the rule contains, and a rule
runs only when one of its hints occurs. Token-shaped rules also need a run of
at least 16 token characters somewhere in the text, which short-worded prose
lacks. A hint may fire where its rule then finds nothing, never the other way
round: ``tests/test_secrets_scan.py`` checks that the hinted scan and the full
scan agree.

Stdlib only, regexes compiled at import.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any
from urllib.parse import unquote
from dataclasses import dataclass

from .secret_calls import CALLS
from .secret_commands import COMMANDS
from .secret_generic import GENERIC, credential_class
from .secret_rules import (  # noqa: F401 - the predicates are used by tests too
    RULE_KINDS as _SPECIFIC_KINDS,
    Rule,
    _ARMOR,
    _ARMOR_END,
    _KEY_HEADER,
    _KEY_LABEL,
    _RULES as _SPECIFIC,
    _FOLD,
    _TOKENS,
    _alone_on_its_line,
    _code_after,
    _label_for,
    _literal_value,
    _placeholder,
    _prose_password,
    _token_like,
    _word_password,
)

# The vendor table and the syntaxes first, then the generic layer (names and values, calls
# and headers, commands): where two rules match the same characters the earlier wins, so a
# prefixed token keeps its name.
_GENERIC_RULES: list[Rule] = [*GENERIC, *CALLS, *COMMANDS]
_RULES: list[Rule] = [*_SPECIFIC, *_GENERIC_RULES]
RULE_KINDS = _SPECIFIC_KINDS | {r.kind for r in _GENERIC_RULES}

__all__ = ["ELLIPSIS", "SecretFinding", "find_secrets", "redact", "redact_key_blocks", "open_key_block", "RULE_KINDS"]

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


# -- name = value, --flag value, and prose ------------------------------------------

# A password's name may be glued to its system (``PGPASSWORD``, ``dbPassword``), or shortened
# in an environment variable's capitals (``DB_PASS``, ``MYSQL_PWD``; ``first_pass`` is a pass).
_KEY_NAME = (
    r"(?:(?:[A-Za-z0-9]{1,40}[_.-]){0,6}"
    r"(?:[A-Za-z0-9]{0,20}?pass(?:word|wd|phrase)|secret|token|api[_-]?key|apikey|"
    r"(?:access|secret|private|account|client|signing|master|license|licence|encryption|service)[_-]?key|"
    r"client[_-]?secret|auth[_-]?token|access[_-]?token|refresh[_-]?token|bearer[_-]?token)"
    r"|(?-i:(?:[A-Z0-9]{1,40}_){1,6}(?:PASS|PWD)))"
)
# A name that merely ends in ``_key`` (``KAGGLE_KEY``, ``sort_key``): its value must look
# like a token, not like a column name.
_LOOSE_KEY_NAME = r"(?:[A-Za-z0-9]{1,40}[_.-]){1,6}key"
_VALUE = r"""(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|`(?P<bq>[^`\n]*)`|(?P<bare>[^\s"'`,;()\[\]{}<>]+))"""

# ``password = "hunter22"``, ``"api_key": "..."``, ``API_KEY: abc123def``, ``token=...``
_ASSIGNMENT = re.compile(
    rf"(?<![\w.-])(?P<name>{_KEY_NAME}|{_LOOSE_KEY_NAME})(?![\w-])[\"'\]]*"
    r"(?:\s*:\s*[A-Za-z_][\w.\[\]| ]*?(?=\s*=))?"  # a type annotation: password: str = ...
    rf"\s*(?:==?|:=?|=>)\s*{_VALUE}",
    re.IGNORECASE,
)
# ``--password hunter2``, ``--api-key=abc123...``
_FLAG = re.compile(rf"(?<![\w-])--?(?P<name>{_KEY_NAME})(?:=|\s+){_VALUE}", re.IGNORECASE)

# Words that make a "<word> key" a credential in prose; "join key", "sort key" are not.
_KEY_QUALIFIERS = frozenset(
    """api access secret private license licence auth signing master client account service encryption admin
    app application deploy deployment webhook subscription developer personal consumer root sas storage ssh gpg
    pgp bearer session""".split()
)
# ``the password is hunter2``, ``the AWS secret access key is ...``, ``my GitLab token: ...``.
# The words before "key" are looked at in Python (``_qualified``): a regex that tried
# every word as a possible qualifier cost five times as much on ordinary prose.
_PROSE = re.compile(
    r"(?i)\b(?P<name>key|password|passwd|passphrase|pass[\s-]?code|pwd|pw|secret|token|credential)s?\b"
    r"(?:\s+(?:for|of|to|on|at|in)(?:\s+[\w.@/'-]{1,40}){1,4}?)?"
    r"\s*(?P<sep>\b(?:is|was|are)\b(?:\s*:)?|=|:|->)\s*(?:now\s+|still\s+|set\s+to\s+)?"
    + _VALUE,
)
_BEFORE_KEY = re.compile(r"(?:[A-Za-z0-9]+[\s_-]+){1,3}$")

# What each generic rule needs, searched for in the lowercased text: a name ending as
# every key name ends, then ``=`` or ``:`` (assignment); a ``--flag`` naming one; a
# name followed within a short clause by "is", "was", "are", ``:``, ``=`` or ``->``
# (prose). None of them can match without "key", "token", "pass", "pw", "secret" or "credential".
_NAME_END = r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|key)"
_GENERIC = (
    (_ASSIGNMENT, re.compile(rf"{_NAME_END}[\"'\]]*\s*[:=]")),
    (_FLAG, re.compile(rf"-[a-z0-9_.-]*{_NAME_END}")),
    (
        _PROSE,
        re.compile(
            r"(?:key|pass(?:word|wd|phrase)|pass[\s-]?code|pwd?|secret|token|credential)s?\b[^\n]{0,100}?"
            r"(?:\b(?:is|was|are)\b|->|[:=])"
        ),
    ),
)


def _qualified(text: str, start: int) -> bool:
    """Whether the words just before a "key" at ``start`` make it a credential."""
    m = _BEFORE_KEY.search(text, max(0, start - 60), start)
    words = re.split(r"[\s_-]+", m.group().lower()) if m else []
    return bool(_KEY_QUALIFIERS.intersection(words))


def _is_password_name(name: str) -> bool:
    return "pass" in name.lower() or name.endswith("PWD")


# The settings before a password in libpq's connection string: ``host=db user=ana password=...``
_LIBPQ_BEFORE = re.compile(
    r"\b(?:host|hostaddr|user|dbname|port|sslmode)=[^\s'\"=,()]+[ \t]+(?:\w+=[^\s'\"=,()]+[ \t]+)*$"
)


def _says_literal(text: str, m: re.Match[str], value_start: int, value_end: int) -> bool:
    """Whether the syntax of a ``name = value`` makes a bare word a literal, not a variable:
    an environment variable or property (``PGPASSWORD=marmalade``, ``Password=...``: a name
    with a capital, ``=`` and no spaces), a ``--flag=value``, a connection string's setting
    (followed by ``;``, or after libpq's other settings), or a line of a configuration file that
    holds nothing else (``password = marmalade`` in my.cnf, ``password: ...`` in YAML).
    In Python, ``connect(password=marmalade)`` passes a variable."""
    between = text[m.end("name") : value_start]
    if between == "=":
        if m.re is _FLAG or any(c.isupper() for c in m.group("name")) or text[value_end : value_end + 1] == ";":
            return True
        if _LIBPQ_BEFORE.search(text, max(0, m.start() - 200), m.start()):
            return True
    # A configuration line separates with ``=`` or ``: `` (YAML needs the space; "passwd:name" is a
    # label); ``obj.password = wrapper`` and ``password: str = x`` are Python.
    separator = between.strip(" \t\"'")
    if separator not in ("=", ":") or (separator == ":" and not between.endswith((" ", "\t"))):
        return False
    if separator == "=" and "." in m.group("name") and between.startswith(" "):
        return False
    return _alone_on_its_line(text, m.start(), value_end)


# -- scanning ---------------------------------------------------------------------

# A run of token characters long enough to be a token (every token rule needs one).
_LONG_RUN = re.compile(r"[A-Za-z0-9_+/=.~:*-]{16,}")


def _fold(text: str) -> str:
    return text.lower() if text.isascii() else text.translate(_FOLD).lower()


# Where a text's words start: their first two characters. A prefix hint is looked for
# only when its first two characters start a word somewhere in the text, which turns
# ~130 substring tests into one regex pass and a set intersection.
_STARTS = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]{2}")
_PREFIX_HINTS: dict[str, list[tuple[str, int]]] = {}
# The other hints, each looked for once however many rules share it ("password" hints several):
# hint -> the positions in ``_RULES`` of the rules it hints, for rules that need no long run
# (``_OTHER``) and for the token rules (``_INNER``), compared folded or as written.
_OTHER_FOLDED: dict[str, list[int]] = {}
_OTHER_RAW: dict[str, list[int]] = {}
_INNER_FOLDED: dict[str, list[int]] = {}
_INNER_RAW: dict[str, list[int]] = {}
for _i, _r in enumerate(_RULES):
    for _h in _r.hints:
        if not _r.token:
            (_OTHER_FOLDED if _r.folded else _OTHER_RAW).setdefault(_h, []).append(_i)
        elif _r.inner or _r.folded or not _h[:2].isalnum():
            (_INNER_FOLDED if _r.folded else _INNER_RAW).setdefault(_h, []).append(_i)
        else:
            _PREFIX_HINTS.setdefault(_h[:2], []).append((_h, _i))
_PREFIX_KEYS = frozenset(_PREFIX_HINTS)
_HintTables = tuple[tuple[tuple[tuple[str, list[int]], ...], bool], ...]
_OTHER: _HintTables = ((tuple(_OTHER_FOLDED.items()), True), (tuple(_OTHER_RAW.items()), False))
_INNER: _HintTables = ((tuple(_INNER_FOLDED.items()), True), (tuple(_INNER_RAW.items()), False))


def _hinted(tables: _HintTables, text: str, folded: str, hits: set[int]) -> None:
    for table, fold in tables:
        where = folded if fold else text
        for hint, rules in table:  # a plain loop: this runs for every statement
            if hint in where:
                hits.update(rules)


def _candidates(text: str, folded: str | None = None) -> list[Rule]:
    """The rules one of whose hints occurs in ``text`` (all that a full scan could need),
    in the order of ``_RULES``."""
    if folded is None:
        folded = _fold(text)
    hits: set[int] = set()
    _hinted(_OTHER, text, folded, hits)
    if _LONG_RUN.search(folded) is not None:  # folded: to IGNORECASE rules, ı is an i
        _hinted(_INNER, text, folded, hits)
        for start in _PREFIX_KEYS.intersection(_STARTS.findall(text)):
            for hint, index in _PREFIX_HINTS[start]:
                if hint in text:
                    hits.add(index)
    # a gate: what a rule's matches need beyond a hint, looked at once the hint occurs
    return [rule for rule in (_RULES[i] for i in sorted(hits)) if rule.gate is None or rule.gate.search(folded)]


# A line break written inside a string literal (``\n``, or ``\\n`` in the repr of one) glues its
# "n" to the next word, where no rule sees a word start (``...\nAKIA...``, ``\npassword=...``)
# and no line begins. The rules read the text with such escapes made blanks and a line break,
# which keeps every offset: what a file holds is found the same in a string that holds the file.
_ESCAPE = re.compile(r"\\+[nrt]")


def _unescaped(text: str) -> str:
    if "\\" not in text:
        return text
    return _ESCAPE.sub(lambda m: " " * (len(m.group()) - 1) + (" " if m.group()[-1] == "t" else "\n"), text)


def find_secrets(text: str) -> list[SecretFinding]:
    """Every secret in ``text``, in order, without overlaps.

    Specific shapes (an AWS key, a GitLab token) win over the generic
    ``name = value`` and prose rules when both match the same characters. A secret
    written encoded (``_encoded_runs``) is found too, as the whole run that holds it.
    """
    if not text:
        return []
    found = _found(text)
    for start, end, plain in _encoded_runs(text):
        if any(start < f.end and f.start < end for f in found):
            continue
        inner = _found(plain)
        if inner:
            found.append(SecretFinding(inner[0].kind, inner[0].label, start, end, _mask(text[start:end])))
    return sorted(found, key=lambda f: f.start)


# A secret can reach a statement encoded: a URL copied from a browser's address bar or a log
# (``...%3Ftoken%3Dghp_...``), JSON's escaped slashes (``postgres:\/\/admin:pw@host``), or
# full-width letters that NFKC makes a token (``ｇｈｐ＿...``). The rules read each run of
# the text between blanks decoded as well; a run whose decoded form holds a secret is that
# secret's extent (what is redacted or refused), since its encoded offsets are not the
# decoded ones. Percent-decoding is done twice at most (a doubly encoded link).
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_BLANK_SEPARATED = re.compile(r"\S+")


def _encoded_runs(text: str) -> list[tuple[int, int, str]]:
    """(start, end, decoded) for each run between blanks that reads otherwise decoded."""
    if _PERCENT.search(text) is None and "\\/" not in text and (
        text.isascii() or unicodedata.is_normalized("NFKC", text)
    ):
        return []
    out = []
    for m in _BLANK_SEPARATED.finditer(text):
        run = plain = m.group()
        for _ in range(2):
            if _PERCENT.search(plain) is None:
                break
            plain = unquote(plain, errors="replace")
        plain = plain.replace("\\/", "/")
        if not plain.isascii():
            plain = unicodedata.normalize("NFKC", plain)
        if plain != run:
            out.append((m.start(), m.end(), plain))
    return out


def _found(text: str) -> list[SecretFinding]:
    view = _unescaped(text)
    folded = _fold(view)
    rules = _candidates(view, folded)
    generic: list[re.Pattern[str]] = []
    if "key" in folded or "token" in folded or "pass" in folded or "pw" in folded or "secret" in folded or (
        "credential" in folded
    ):
        generic = [rule for rule, hint in _GENERIC if hint.search(folded) is not None]
    if not rules and not generic:
        return []  # most prose: no rule could match
    return _scan(text, rules=rules, generic=generic, view=view)


def _scan(
    original: str,
    *,
    rules: list[Rule] | None = None,
    generic: list[re.Pattern[str]] | None = None,
    view: str | None = None,
) -> list[SecretFinding]:
    """The rules themselves, all of them by default; ``find_secrets`` passes the hinted ones.
    They read ``view`` (``_unescaped(original)``, the same length); previews show ``original``."""
    text = _unescaped(original) if view is None else view
    found: list[SecretFinding] = []

    def add(kind: str, label: str, start: int, end: int) -> None:
        if start >= end or any(start < f.end and f.start < end for f in found):
            return
        value = original[start:end]
        # A key block's header says what it is and holds nothing secret.
        header = _KEY_HEADER.match(value) if kind == "private-key" else None
        masked = header.group() + ELLIPSIS if header else _mask(value)
        found.append(SecretFinding(kind, label, start, end, masked))

    for rule in _RULES if rules is None else rules:
        if rule.judge is not None:
            _judged(rule, text, add)
            continue
        for m in rule.pattern.finditer(text):
            start, end = m.span(rule.group) if rule.group is not None else m.span()
            if rule.check is None or rule.check(text[start:end]):
                add(rule.kind, rule.label, start, end)

    generic = [rule for rule, _ in _GENERIC] if generic is None else generic
    for pattern in (p for p in (_ASSIGNMENT, _FLAG) if p in generic):
        for m in pattern.finditer(text):
            group = _value_group(m)
            value = m.group(group)
            start, end = m.span(group)
            name = m.group("name")
            if credential_class(name) is None:
                continue  # next_page_token, idempotency_key: names of what is no credential
            strict = re.fullmatch(_KEY_NAME, name, re.IGNORECASE) is not None
            if _literal_value(text, value, end, quoted=group != "bare") and (strict or _token_like(value)):
                add(*_label_for(name), start, end)
            elif group == "bare" and _is_password_name(name) and _says_literal(text, m, start, end):
                if _word_password(value) and not _code_after(text, end):
                    add("password", "a password", start, end)
    for m in _PROSE.finditer(text) if _PROSE in generic else ():
        group = _value_group(m)
        value = m.group(group).rstrip(".,;:!?")
        start = m.start(group)
        end = start + len(value)
        name = m.group("name").lower()
        if name == "key" and not _qualified(text, m.start("name")):
            continue  # a join key, a sort key: not a credential
        if "pass" in name or name in ("pw", "pwd"):
            # a plain word only after "is", ": " or "->" with a space ("pw:api" is a label)
            spaced = any(c.isspace() for c in text[m.end("sep") : start])
            ok = _literal_value(text, value, end, quoted=group != "bare") or (
                group == "bare" and m.group("sep") != "=" and spaced and _prose_password(text, value, end)
            )
        else:
            ok = not _placeholder(value) and _token_like(value, 12)
        if ok:
            add(*_label_for(name), start, end)

    found.sort(key=lambda f: f.start)
    return found


def _judged(rule: Rule, text: str, add: Any) -> None:
    """A generic rule's matches, each judged. A match judged not a secret is searched again from
    its name's end when its value is quoted: the value may hold the next name
    (``{'cfg': "DB_PASSWORD_PROD=..."}``); quoted values are short, so this stays linear."""
    assert rule.judge is not None
    has_name = "name" in rule.pattern.groupindex
    has_bare = "bare" in rule.pattern.groupindex
    pos = 0
    while (m := rule.pattern.search(text, pos)) is not None:
        finding = rule.judge(m, text)
        if isinstance(finding, list):  # a command line or a cookie header may hold several
            for one in finding:
                add(*one)
            pos = max(m.end(), m.start() + 1)
        elif finding is not None or not has_name or (has_bare and m.group("bare") is not None):
            if finding is not None:
                add(*finding)
            pos = max(m.end(), m.start() + 1)
        else:
            pos = m.end("name")


def _value_group(m: re.Match[str]) -> str:
    return next(g for g in ("dq", "sq", "bq", "bare") if m.group(g) is not None)


def redact(text: str) -> str:
    """``text`` with every secret replaced by ``[REDACTED:<kind>]``."""
    out = text
    for f in reversed(find_secrets(text)):
        out = f"{out[:f.start]}[REDACTED:{f.kind}]{out[f.end:]}"
    return out


# The rules whose secret spans lines: key files in every format.
_KEY_RULES = [rule for rule in _TOKENS if rule.kind in ("private-key", "putty-key")]
# Where such a block begins and where it ends (PEM and PGP armor, SSH2, PuTTY's last line).
_BLOCK_MARKERS = ("-----BEGIN", "---- BEGIN", "PuTTY-User-Key-File-")
_BLOCK_BEGIN = re.compile(rf"{_ARMOR}BEGIN{_KEY_LABEL}{_ARMOR_END}|PuTTY-User-Key-File-\d: ?[\w@.-]{{1,40}}")
_BLOCK_END = re.compile(rf"{_ARMOR}END{_KEY_LABEL}{_ARMOR_END}|Private-(?:MAC|Hash):")


def redact_key_blocks(text: str) -> str:
    """``text`` with every private key block replaced as a whole, across lines.

    ``redact`` does this too; this is for text that is split into lines before it is
    redacted: line by line, a key's header holds nothing secret and its body lines
    look like nothing at all.
    """
    if not any(marker in text for marker in _BLOCK_MARKERS):
        return text
    for rule in _KEY_RULES:
        text = rule.pattern.sub(functools.partial(_redacted, rule), text)
    return text


def _redacted(rule: Any, m: re.Match[str]) -> str:
    """A key rule's match as its kind, where the rule's check (if any) agrees."""
    return f"[REDACTED:{rule.kind}]" if rule.check is None or rule.check(m.group()) else m.group()


def open_key_block(text: str, cut: int) -> re.Match[str] | None:
    """The header of a key block that begins before ``cut`` and has not ended by then,
    or None. Whoever keeps only the text after ``cut`` needs it: the key's body lines
    there look like nothing without their header."""
    end = cut
    while True:
        begin = max(text.rfind(marker, 0, end) for marker in _BLOCK_MARKERS)
        if begin < 0:
            return None
        header = _BLOCK_BEGIN.match(text, begin)
        if header is not None:
            return header if _BLOCK_END.search(text, header.end(), cut) is None else None
        end = begin  # a certificate's header, or prose naming the format: look further back
