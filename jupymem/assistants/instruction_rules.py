"""The rules people already wrote in an instruction file, found conservatively.

A rule is a list item (``-``, ``*``, ``+``, ``1.``, ``1)``, a task box dropped), with its
indented continuation lines, or a one-line paragraph under a heading that starts with an
imperative ("Use ...", "Never ...", "Run ..."). Not rules: headings, prose paragraphs of
more than one line, fenced or indented code, HTML and comments, tables, quotes, front
matter, jupymem's own section, items that only introduce a sub-list (ending in ":"), items
of fewer than three words (a list of packages is not a list of rules), and items longer
than ``MAX_RULE_CHARS`` (a paragraph is not a rule: it is counted as skipped).

A rule's kind is ``constraint`` only when it says so plainly ("never", "always", "must",
or it starts with "do not"/"don't"); every other rule is a ``note``. Guessing
"decision" or "preference" from wording would put words in the authors' mouths, and a
person can re-kind a memory in a moment (``supersede --kind``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_RULE_CHARS = 400
MAX_RULES = 500  # per file: more is a document, not a list of rules
MIN_WORDS = 3

_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_TASK = re.compile(r"^\[[ xX]\]\s+")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_RULER = re.compile(r"^\s{0,3}([-*_=])(\s*\1){2,}\s*$")
_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_CONSTRAINT = re.compile(r"\b(?:never|always|must|mustn't)\b|^(?:do not|don't|don’t)\b", re.IGNORECASE)
IMPERATIVES = frozenset("""
    add always avoid call check commit document do don't don’t ensure follow format import install keep load
    make name never note only pin prefer put read record remember run save set store test use verify write
""".split())


@dataclass(frozen=True)
class Rule:
    """One rule: its text as a statement, the line it starts on (from 1), its kind."""

    text: str
    line: int
    kind: str


@dataclass(frozen=True)
class Found:
    """What a file holds: its rules, and how many items were too long to be one."""

    rules: tuple[Rule, ...]
    too_long: int


def kind_of(text: str) -> str:
    return "constraint" if _CONSTRAINT.search(text) else "note"


def find(text: str) -> Found:
    """The rules of an instruction file's text (jupymem's section already blanked out)."""
    lines = text.splitlines()
    rules: list[Rule] = []
    too_long = 0
    fence: str | None = None
    in_comment = False
    under_heading = False
    i = 0
    if lines and lines[0].strip() == "---":  # YAML front matter
        i = next((j + 1 for j in range(1, len(lines)) if lines[j].strip() in ("---", "...")), len(lines))
    while i < len(lines):
        line = lines[i]
        bare = line.strip()
        if fence is not None:  # inside a fenced block: only its closing fence matters
            if bare.startswith(fence[0] * len(fence)) and not bare.strip(fence[0]):
                fence = None
            i += 1
            continue
        if in_comment:
            in_comment = "-->" not in line
            i += 1
            continue
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group(1)
            i += 1
            continue
        if bare.startswith("<!--"):
            in_comment = "-->" not in bare
            i += 1
            continue
        if _HEADING.match(line) or _RULER.match(line):  # a ruler is no item, and ends a paragraph
            under_heading = under_heading or bool(_HEADING.match(line))
            i += 1
            continue
        item = _ITEM.match(line)
        if item:
            indent = len(item.group(1))
            parts, start = [item.group(2)], i
            i += 1
            while i < len(lines) and lines[i].strip() and not _ITEM.match(lines[i]) and not _FENCE.match(lines[i]) \
                    and len(lines[i]) - len(lines[i].lstrip()) > indent:
                parts.append(lines[i].strip())
                i += 1
            rule = _clean(" ".join(parts))
            if len(rule) > MAX_RULE_CHARS:
                too_long += 1
            elif _is_rule(rule):
                rules.append(Rule(rule, start + 1, kind_of(rule)))
            continue
        if not bare:
            i += 1
            continue
        # A paragraph: its lines are rules only under a heading, and only when every one
        # of them is a short imperative line (prose has lines that are not).
        start = i
        i += 1
        while i < len(lines) and lines[i].strip() and not _HEADING.match(lines[i]) and not _ITEM.match(lines[i]) \
                and not _RULER.match(lines[i]) and not _FENCE.match(lines[i]) and not lines[i].strip().startswith("<!--"):
            i += 1
        paragraph = [(n + 1, _clean(lines[n])) for n in range(start, i)]
        if under_heading and all(_imperative(lines[n]) for n in range(start, i)):
            rules.extend(Rule(text, n, kind_of(text)) for n, text in paragraph)
    return Found(tuple(rules), too_long)


def _imperative(line: str) -> bool:
    """A short line of prose that starts with an imperative ("Use ...", "Never ...")."""
    if _plain_markup(line):
        return False
    text = _clean(line)
    first = text.split(maxsplit=1)[0].lower().rstrip(",:") if text else ""
    return first in IMPERATIVES and len(text) <= MAX_RULE_CHARS and _is_rule(text)


def _plain_markup(line: str) -> bool:
    """Lines that are markup, not prose: code (indented four), HTML, tables, quotes, rulers."""
    bare = line.strip()
    return line.startswith(("    ", "\t")) or bare[:1] in "<|>[!" or bool(_RULER.match(line))


def _clean(text: str) -> str:
    text = _TASK.sub("", text.strip())
    text = _EMPHASIS.sub(r"\2", text)
    return " ".join(text.split())


def _is_rule(text: str) -> bool:
    return len(text.split()) >= MIN_WORDS and not text.endswith(":")
