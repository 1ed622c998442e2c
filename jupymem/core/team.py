"""The team engine (one PostgreSQL database for a whole team) as the core sees it: which URL, which key, which writes.

A repository's memory lives there when a URL is set: ``Settings.database_url`` (the
``JUPYMEM_DATABASE_URL`` variable, or the Jupyter server's ``JupymemApp.database_url``),
which holds for every repository of that process, or the URL ``jupymem init --database``
remembered in the registry for one repository. The setting wins over the registry: a hub
that turns the team engine on means it for every notebook.

Decisions worth knowing:

* The project's key on the server is a root commit of the repository (``root_commits``):
  every clone of a repository has it, whoever made the clone and wherever, with nothing
  stored in the repository, and a merge of another history keeps it (roots are only
  added). A repository without a commit has no key yet, and is told so.
* People never migrate the schema nor admit themselves: their roles cannot (``admin``
  does both, run by the team's administrator). Opening checks the schema version and the
  membership (``PgConnection``) and says who to ask.
* The URL is remembered without its password (``connection.public_url``); libpq finds the
  password where it always looks: ``PGPASSWORD``, ``~/.pgpass`` or a service file.
* The database is the shared memory, so there is no ``.jupymem/`` to follow or write
  (``TeamWrites`` stands in for ``share.Sharing``), no history mark beside a file, and
  what the engine cannot do yet is refused by name (``NotOnTeamEngine``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..errors import InvalidTransition, NoMemory, NotOnTeamEngine
from ..storage import database, registry

if TYPE_CHECKING:
    from ..reports import Engine, SharingState, SharingStatus

NONE: SharingState = "none"  # share.NONE, without importing the sharing room


def url_for(settings: Settings, record: registry.ProjectRecord | None) -> str | None:
    """The team database of a repository: the process's setting, else its binding's."""
    return settings.database_url or (record.database if record is not None else None)


def root_commits(root: Path) -> tuple[str, ...]:
    """The repository's root commits, lowest first: each is a key its project may have on
    the server. A project keeps the key it was made with (the lowest root when it was first
    admitted or moved there); a merge of an unrelated history adds a root, maybe a lower
    one, and the connection finds the project by the root it already has
    (``PgConnection``'s ``candidates``, ``admin.project_for``), so nothing is orphaned."""
    commits = registry.root_commits(root)
    if not commits:
        raise NoMemory(
            f"{root.name} has no commit yet, and the team database knows a repository by its first commit. "
            "Commit something (git commit), then try again."
        )
    return commits


def project_key(root: Path) -> str:
    """The key a new project of the repository gets on the server: its lowest root commit,
    the same in every clone (an existing project keeps its own: ``root_commits``)."""
    return root_commits(root)[0]


def not_here(proj: Any, what: str) -> None:
    """Refuse ``what`` (``refuse``) when ``proj``'s memory is on the team engine."""
    if proj.team:
        raise refuse(what)


def refuse(what: str) -> NotOnTeamEngine:
    """The error for an action the team engine cannot do yet."""
    return NotOnTeamEngine(
        f"not yet on the team engine: {what}. Nothing was changed; the repository's own SQLite memory "
        "(without JUPYMEM_DATABASE_URL) can do it."
    )


def author(root: Path, home: Path | None = None) -> str | None:
    """Who the process says records on the team engine: the JupyterHub user
    (``JUPYTERHUB_USER``) when there is one, else the git identity. Only a claim: the
    database writes each event's writer itself, as the connecting role with the label the
    administrator bound to it (``guard.event_author``), so a process cannot name someone
    else; this is what the journal hands the log, and the database overrides it."""
    hub_user = os.environ.get("JUPYTERHUB_USER", "").strip()
    if hub_user:
        return hub_user
    from .payload import author as git_author

    return git_author(root, home)


def where(url: str) -> str:
    """host:port/db of ``url``, for status (never a password)."""
    from ..storage.postgres.connection import display_url

    return display_url(url).removeprefix("postgresql://").split("@", 1)[-1]


def check_supersede(old: Any, private: bool) -> None:
    """A shared memory is superseded openly or not at all: teammates would see it replaced
    by one they cannot see, and the events they can see would no longer make their rows."""
    if private and not old.private:
        raise InvalidTransition(
            f"{old.id} is shared: on the team database it is superseded openly or not at all. Record your "
            "version with --private instead, or supersede it without --private."
        )


class TeamWrites:
    """What ``Project`` asks of ``share.Sharing``, on the team engine: each write is a
    ``Journal`` in one database transaction (the writer is ``author``: the hub user, else
    the git identity; the database adds the role), and there are no files to follow,
    verify or rebuild from."""

    def __init__(self, conn: Any, root: Path, home: Path | None = None) -> None:
        self.conn = conn
        self.root = root
        self.home = home

    def state(self) -> str:
        return NONE

    def follow(self) -> None:
        return None

    def has_shared_events(self) -> bool:
        return False

    def verify_files(self) -> tuple[int, list[str]]:
        return 0, []

    def rebuild(self) -> int:
        raise refuse("rebuild")

    @contextlib.contextmanager
    def writing(self) -> Iterator[Any]:
        from ..sharing.journal import Journal

        with database.transaction(self.conn):
            yield Journal(self.conn, None, author(self.root, self.home))

    def status(self) -> SharingStatus:
        """``switch.status``'s answer, as a repository that does not share through git gives it."""
        from ..reports import SharingStatus

        return SharingStatus(state=NONE, folder=".jupymem", private_memories=self.conn.store.own_private_count())


def engine_of(proj: Any) -> Engine:
    """Which engine holds ``proj``'s memory and where: status's ``engine``."""
    from ..reports import Engine

    conn: Any = proj.conn
    if getattr(conn, "module_name", None) == "postgresql":
        return Engine(name="postgresql", where=where(conn.url))
    return Engine(name="sqlite", where=str(proj.database))


def is_team(conn: Any) -> bool:
    return getattr(conn, "module_name", None) == "postgresql"



def administer(step: str, url: str | None, name: str | None, root: Path | None, password: str | None = None, *,
               label: str | None = None) -> str:
    """One step of a team database's administration (``jupymem team``), said in one line.

    ``setup`` makes or upgrades the schema (safe to repeat); ``user`` makes ``name`` a login
    role of the team; ``admit``/``remove`` gives or takes ``name``'s access to the memory of
    the repository at ``root`` (its key on the server: ``project_key``); ``gc`` drops every
    member's staged failures older than ``config.EVIDENCE_DAYS`` in that repository's project
    (a member's own gc reaches only their own)."""
    from ..errors import InvalidStatement

    if not url:
        raise InvalidStatement("jupymem team needs --database URL: the team database, as its administrator.")
    if step not in ("setup", "gc", "rebuild") and not name:
        raise InvalidStatement(f"jupymem team {step} needs the person's database role: jupymem team {step} NAME.")
    from ..storage.postgres import admin

    shown = where(url)
    admin.require_administrator(url)
    if step == "setup":
        return f"The team schema at {shown} is at version {admin.create_schema(url)}."
    if step == "user":
        assert name is not None
        if label is not None:
            from ..storage import validate

            validate.check_label(label, "--label", max_chars=admin.MAX_LABEL_CHARS)
        admin.create_user(url, name, password, label=label)
        shown_as = f" as {name} ({label})" if label else ""
        return (f"{name} can log in to {shown}{shown_as}; `jupymem team admit {name}` in a repository admits them "
                "to its memory.")
    found = registry.find_git_root(root) if root is not None else None
    if found is None:
        raise InvalidStatement(f"{root} is not inside a git repository: admit people from inside the repository.")
    key = admin.project_for(url, root_commits(found)) if step == "admit" else admin.project_for(
        url, root_commits(found), existing=True)
    if step == "rebuild":
        n = admin.rebuild(url, key)
        return (f"{found.name}'s memories, history and cited evidence at {shown} were derived again from its log "
                f"({n} event{'' if n == 1 else 's'}); `jupymem verify` checks them.")
    if step == "gc":
        from datetime import timedelta

        from ..config import EVIDENCE_DAYS
        from ..intake import clock

        before = clock.format_at(clock.now() - timedelta(days=EVIDENCE_DAYS))
        dropped = admin.drop_stale_evidence(url, key, before)
        return (f"Dropped {dropped} staged failure{'' if dropped == 1 else 's'} older than {EVIDENCE_DAYS} days "
                f"from {found.name}'s memory at {shown}, whoever staged them; memories are untouched.")
    assert name is not None
    if step == "admit":
        admin.add_member(url, key, name)
        return f"{name} is admitted to {found.name}'s memory at {shown} (project {key[:12]})."
    admin.remove_member(url, key, name)
    return f"{name} no longer reaches {found.name}'s memory at {shown}; what they recorded stays the project's."
