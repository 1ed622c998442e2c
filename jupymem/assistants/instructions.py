"""The instruction files in step with memory, and the rules already in them brought into it.

``sync`` writes the block into ``AGENTS.md`` (and ``CLAUDE.md`` and
``.github/copilot-instructions.md`` where the repository has them) as jupymem's section
(``instruction_files``): a file is written only when its section differs from the one
the block gives, which happens only when the block's revision changes (or someone edited
the section), so a second run changes no byte. ``check=True`` writes nothing and says
which files are stale, for CI and pre-commit.

The block written there is not quite the one a notebook assistant gets: it leaves out
private memories (the file is committed and read by everyone), and when memory outgrows
the cap its places go in block order (kind, time), not shared between the shared files'
writers as the live block shares them (that order depends on when this clone saw each
file, and the section must come out the same in every clone: CI checks it in a fresh
one). Every statement in it was checked for secrets on its way into memory; the section
is scanned again before it is written, and refused if anything looks like one.

``import_rules`` goes the other way: the rules written in those files
(``instruction_rules``), outside jupymem's section, become memories once: supported (a
person wrote them), recorded by a person, citing file and line (provenance: the file as
its ``notebook``, the line as its ``cell_id``, ``L12``). A rule whose memory already
exists, in any state (retired too), is not recorded again. Each rule passes the checks
every entrance applies (the statement's, secrets, language, then ``validate`` as it is
recorded); a refused rule is reported with its file, line and why, and the others go in.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Settings
from ..errors import JupymemError, NoMemory, SecretRefused, UnknownMemory
from ..models import SUPPORTED, Provenance, _Plain
from . import instruction_files as files
from . import instruction_rules

if TYPE_CHECKING:
    from ..core.project import Project

UP_TO_DATE, WRITTEN, STALE = "up to date", "written", "stale"


@dataclass(frozen=True, eq=False, repr=False)
class FileState(_Plain):
    """One instruction file: ``state`` is "up to date", "written" or "stale"; ``revision``
    the block revision its section had before (None: no section, or no file)."""

    file: str
    state: str
    revision: str | None = None
    created: bool = False


@dataclass(frozen=True, eq=False, repr=False)
class Refused(_Plain):
    """A rule that was not imported, and why."""

    file: str
    line: int
    reason: str


@dataclass(frozen=True, eq=False, repr=False)
class Imported(_Plain):
    file: str
    line: int
    id: str
    kind: str
    statement: str


@dataclass(frozen=True, eq=False, repr=False)
class InstructionsReport(_Plain):
    """What ``sync`` (and ``import_rules``) did or found. ``revision``: the block's (None
    without memory)."""

    revision: str | None = None
    files: tuple[FileState, ...] = ()
    checked: bool = False
    imported: tuple[Imported, ...] = ()
    known: int = 0
    refused: tuple[Refused, ...] = ()
    too_long: int = 0
    imports: bool = False  # rules were looked for (``--import``)
    message: str = ""

    @property
    def stale(self) -> tuple[str, ...]:
        return tuple(f.file for f in self.files if f.state == STALE)


def run(root: Path, settings: Settings, *, check: bool = False, rules: bool = False) -> InstructionsReport:
    """What ``jupymem instructions`` does: ``sync``, ``sync(check=True)``, or ``import_rules``."""
    if check and rules:
        raise JupymemError("--check writes nothing and --import records memories: give one of them.")
    return import_rules(root, settings) if rules else sync(root, settings, check=check)


# -- the section ----------------------------------------------------------------------


def public_block(proj: Project, cap: int) -> tuple[str, str]:
    """(text, revision) of the block without private memories, the same in every clone."""
    from ..core.block import build_block

    memories = [m for m in proj.list() if not m.private]
    block = build_block(memories, cap)
    return block.text, block.revision


def sync(root: Path, settings: Settings, *, check: bool = False, report: InstructionsReport | None = None
         ) -> InstructionsReport:
    """Bring the instruction files of ``root``'s repository in step with its memory (or,
    with ``check``, only say which are not). Never creates memory. Raises
    ``InstructionFileError`` before writing anything when any file cannot be trusted."""
    from ..core.opening import find_project

    base = report or InstructionsReport()
    targets = files.present(root)
    sections = {f.name: files.section(f) for f in targets}  # every file's markers checked before any write
    proj = find_project(root, settings)
    if proj is None:
        if check and not any(sections.values()):
            return replace(base, checked=True, message=f"{root.name} has no memory, and no instruction file has "
                                                           "jupymem's section: nothing to check.")
        raise NoMemory(f"{root.name} has no memory here, so there is no block to write"
                       + (" or check against (a clone sees the memory shared through git: `jupymem share`)."
                          if check else "; record one first (`jupymem remember`, or `--import` the files' rules)."))
    text, revision = public_block(proj, settings.block_cap)
    _no_secret(text)
    plans = []
    for f in targets:
        old = sections[f.name]
        wanted = files.with_section(f, files.render(text, revision, files.line_ending(f.text or "")))
        state = UP_TO_DATE if wanted == (f.text or "") and f.exists else STALE
        plans.append((f, wanted, FileState(f.name, state, old.revision if old else None, created=not f.exists)))
    if not check:
        for f, _, st in plans:
            if st.state == STALE:
                files.check_writable(f)  # all refusals before the first write
        for f, wanted, st in plans:
            if st.state == STALE:
                files.write(f, wanted)
    states = tuple(st if check or st.state == UP_TO_DATE else replace(st, state=WRITTEN) for _, _, st in plans)
    return replace(base, revision=revision, files=states, checked=check, message=_said(states, check, revision))


def _said(states: tuple[FileState, ...], check: bool, revision: str) -> str:
    if check and any(s.state == STALE for s in states):
        return f"Not in step with memory (block revision {revision}): run `jupymem instructions` and commit the result."
    if any(s.state == WRITTEN for s in states):
        return f"Wrote memory's section (block revision {revision})."
    return f"In step with memory (block revision {revision})."


def _no_secret(text: str) -> None:
    from ..intake.secrets_scan import find_secrets

    found = find_secrets(text)
    if found:
        raise SecretRefused(f"The block holds what looks like {found[0].label} ({found[0].masked}); it is not written "
                            "into any instruction file. Retire the memory that holds it, and run again.")


# -- import ---------------------------------------------------------------------------


def import_rules(root: Path, settings: Settings) -> InstructionsReport:
    """Record the rules of the repository's instruction files (outside jupymem's section)
    as supported memories, each once; then bring the files in step (``sync``). Starts
    the repository's memory when it has none and a rule can be kept."""
    from ..core.opening import find_project, init_project
    from ..intake import capture
    from ..intake.translate import check_first_record

    candidates: list[tuple[str, instruction_rules.Rule]] = []
    refused: list[Refused] = []
    too_long = 0
    present = files.present(root)
    for f in present:
        files.check_writable(f)  # the section is written after: a file that cannot take it imports nothing
    for f in present:
        if not f.exists:
            continue
        found = instruction_rules.find(files.outside(f))
        if len(found.rules) > instruction_rules.MAX_RULES:
            raise files.InstructionFileError(
                f"{f.name} has {len(found.rules):,} list items and imperative lines; more than "
                f"{instruction_rules.MAX_RULES} is a document, not a list of rules. Nothing was imported.")
        too_long += found.too_long
        for rule in found.rules:
            try:
                check_first_record(rule.text, settings)
            except JupymemError as exc:
                refused.append(Refused(f.name, rule.line, " ".join(exc.message.split())))
                continue
            candidates.append((f.name, rule))
    proj = find_project(root, settings)
    if proj is None and candidates:
        proj = init_project(root, settings)
    imported: list[Imported] = []
    known = 0
    seen: set[str] = set()
    for name, rule in candidates:
        assert proj is not None  # made above when there is a candidate
        memory_id = capture.memory_id(capture.check_statement(rule.text))
        if memory_id in seen or _exists(proj, memory_id):
            known += 1
            continue
        seen.add(memory_id)
        prov = Provenance(recorder="person", notebook=name, cell_id=f"L{rule.line}")
        try:
            m = proj.remember(rule.text, kind=rule.kind, provenance=prov, standing=SUPPORTED)
        except JupymemError as exc:  # what validate refuses as it records: this rule only
            refused.append(Refused(name, rule.line, " ".join(exc.message.split())))
            continue
        imported.append(Imported(name, rule.line, m.id, m.kind, m.statement))
    report = InstructionsReport(imported=tuple(imported), known=known, refused=tuple(refused), too_long=too_long,
                                imports=True)
    if proj is None:
        return replace(report, message=f"No rule in {root.name}'s instruction files could be kept, and it has no "
                                       "memory to write there.")
    return sync(root, settings, report=report)


def _exists(proj: Project, memory_id: str) -> bool:
    try:
        return proj.get(memory_id).id == memory_id
    except UnknownMemory:
        return False
