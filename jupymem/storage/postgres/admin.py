"""What a team's database administrator does: make the schema, make people, admit them.

Run as a role that may create roles and bypasses row-level security (a superuser, or a
role with CREATEROLE and BYPASSRLS): ``members`` is written here and nowhere else. The
tables belong to ``schema.OWNER_ROLE``, a role no one logs in as; people log in as their
own roles, members of ``schema.USER_ROLE``, which holds the table privileges, and see
what row-level security admits. So the role that runs migrations is never the role a
person works as, and an owner's exemption from its own policies is moot (they are FORCEd
besides).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from ...errors import AccessDenied, JupymemError, NoMemory, StorageError
from .connection import _psycopg, pg_error
from .guard import MAX_LABEL_CHARS
from .schema import MIGRATIONS, OWNER_ROLE, SCHEMA, USER_ROLE

__all__ = ["MAX_LABEL_CHARS", "add_member", "create_schema", "create_user", "drop_stale_evidence", "project_for",
           "rebuild", "remove_member", "require_administrator", "set_label"]


@contextlib.contextmanager
def _connect(url: str) -> Iterator[Any]:
    """An administrator's connection; a driver's error leaves as one line, never a traceback
    (a member who runs ``jupymem team`` is told whose command it is)."""
    psycopg = _psycopg()
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            yield conn
    except JupymemError:
        raise
    except psycopg.errors.InsufficientPrivilege as exc:
        first = (str(exc).strip().splitlines() or ["permission denied"])[0]
        raise AccessDenied(
            f"jupymem team is the administrator's: connect as a role that may create roles and bypasses row-level "
            f"security ({first}). Nothing was changed."
        ) from None
    except psycopg.Error as exc:
        err = pg_error(exc, "The team database")
        raise (err or StorageError(f"The team database refused this ({exc}). Nothing was changed.")) from None


def _ident(name: str) -> Any:
    return _psycopg().sql.Identifier(name)


def _ensure_role(conn: Any, name: str, *, login: bool = False, password: str | None = None) -> None:
    sql = _psycopg().sql
    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
    if exists is None:
        conn.execute(sql.SQL("CREATE ROLE {} " + ("LOGIN" if login else "NOLOGIN")).format(_ident(name)))
    if password is not None:
        conn.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(_ident(name), sql.Literal(password)))


def require_administrator(url: str) -> None:
    """Refuse, in one line, a role that is not the team's administrator (a superuser, or a
    role that bypasses row-level security): a member who runs ``jupymem team`` is told so."""
    with _connect(url) as conn:
        row = conn.execute("SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user").fetchone()
    if not (row and row[0]):
        raise AccessDenied(
            "jupymem team is the administrator's: connect as a role that may create roles and bypasses row-level "
            "security (a superuser, say). Nothing was changed."
        )


def schema_version(conn: Any) -> int:
    """Migrations applied to the database ``conn`` is connected to (0: none)."""
    row = conn.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.schema_migrations",)).fetchone()
    if row[0] is None:
        return 0
    return conn.execute(f"SELECT count(*) FROM {SCHEMA}.schema_migrations").fetchone()[0]


def create_schema(url: str) -> int:
    """Make (or bring up to date) the team schema in the database at ``url``; returns
    its version. Safe to run again, and by two administrators at once."""
    from ...errors import SchemaTooNew

    with _connect(url) as conn:
        _ensure_role(conn, OWNER_ROLE)
        _ensure_role(conn, USER_ROLE)
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('jupymem.migrations', 0))")
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA} AUTHORIZATION {OWNER_ROLE}")
            conn.execute(f"GRANT USAGE ON SCHEMA {SCHEMA} TO {USER_ROLE}")
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {SCHEMA}.schema_migrations"
                " (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
            conn.execute(f"ALTER TABLE {SCHEMA}.schema_migrations OWNER TO {OWNER_ROLE}")
            version = schema_version(conn)
            if version > len(MIGRATIONS):
                raise SchemaTooNew(
                    f"The team database has schema {version}; this jupymem knows up to {len(MIGRATIONS)}. "
                    "Upgrade jupymem (pip install -U jupymem); nothing was changed."
                )
            # As the owner, so that it owns what it creates (and its policies bind it too).
            conn.execute(f"SET LOCAL ROLE {OWNER_ROLE}")
            conn.execute(f"SET LOCAL search_path = {SCHEMA}")
            for number in range(version + 1, len(MIGRATIONS) + 1):
                conn.execute(MIGRATIONS[number - 1])
                conn.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (number,))
        return len(MIGRATIONS)


def create_user(url: str, role: str, password: str | None = None, *, label: str | None = None) -> None:
    """A login role for a person, able to use the team schema (and nothing else until
    ``add_member`` admits it to a project); ``label``: who they are (``set_label``)."""
    sql = _psycopg().sql
    with _connect(url) as conn:
        _ensure_role(conn, role, login=True, password=password)
        conn.execute(sql.SQL("GRANT {} TO {}").format(_ident(USER_ROLE), _ident(role)))
    if label is not None:
        set_label(url, role, label)


def set_label(url: str, role: str, label: str) -> None:
    """Bind ``label`` ("Ada Lovelace <ada@example.com>") to ``role``: the events the role
    appends name it beside the role (``guard.event_author``), whatever its process claims."""
    with _connect(url) as conn:
        conn.execute(
            f"INSERT INTO {SCHEMA}.people (role, label) VALUES (%s, %s) ON CONFLICT (role) DO UPDATE SET label = %s",
            (role, label, label),
        )


def project_for(url: str, roots: Sequence[str], *, existing: bool = False) -> str:
    """The project of a repository whose HEAD has these root commits: the one of them that
    already names a project (a merge of an unrelated history adds roots, it takes none
    away, so the project keeps its key), else the lowest, which a first ``admit`` makes.
    ``existing``: there must be one already."""
    if not roots:
        raise NoMemory("This repository has no commit yet: commit something (git commit), then try again.")
    with _connect(url) as conn:
        found = [r[0] for r in conn.execute(
            f"SELECT DISTINCT project FROM {SCHEMA}.members WHERE project = ANY(%s) ORDER BY project", (list(roots),))]
    if found:
        return str(found[0])
    if existing:
        raise NoMemory("No one is admitted to this repository's memory in the team database yet "
                       "(`jupymem team admit NAME` makes it).")
    return min(roots)


def rebuild(url: str, project: str) -> int:
    """Derive ``project``'s memories, history and cited evidence again from its log, and its
    head from its last event (``guard.rebuild_project``): the repair after an edit that only
    an administrator could make. Returns how many events were applied."""
    with _connect(url) as conn:
        return int(conn.execute(f"SELECT {SCHEMA}.rebuild_project(%s)", (project,)).fetchone()[0])


def add_member(url: str, project: str, role: str) -> None:
    """Admit ``role`` to ``project``'s memory (making the project, if it is new)."""
    with _connect(url) as conn:
        conn.execute(
            f"INSERT INTO {SCHEMA}.members (project, role) VALUES (%s, %s) ON CONFLICT DO NOTHING", (project, role)
        )


def remove_member(url: str, project: str, role: str) -> None:
    """Take ``role``'s access to ``project`` away (its rows stay: memory is the project's)."""
    with _connect(url) as conn:
        conn.execute(f"DELETE FROM {SCHEMA}.members WHERE project = %s AND role = %s", (project, role))


def drop_stale_evidence(url: str, project: str, before: str, *, dry_run: bool = False) -> int:
    """Drop every member's staged failures in ``project`` staged before ``before`` (an
    ``at`` string), the administrator's share of gc on the team engine: a member's gc
    reaches only their own (row-level security), so the failures of someone who left, or
    who never runs gc, would stay for ever. A failure a memory cites keeps its cited copy
    (``cited_evidence``), which this leaves alone. Returns how many (would) go."""
    with _connect(url) as conn:
        # A member's role would see (and drop) none of this: row-level security hides the rows.
        if not conn.execute("SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
            raise AccessDenied(
                "jupymem team gc is the administrator's: connect as a role that bypasses row-level security "
                "(a member's own `jupymem gc` drops their own old staged failures). Nothing was changed."
            )
        where = f"FROM {SCHEMA}.staged_evidence WHERE project = %s AND created_at < %s"
        if dry_run:
            return int(conn.execute(f"SELECT count(*) {where}", (project, before)).fetchone()[0])
        return int(conn.execute(f"DELETE {where}", (project, before)).rowcount)
