"""A real PostgreSQL for the team engine's tests (``tests/test_pg_engine.py``).

pgserver bundles PostgreSQL 16 with pgvector and starts it in a temp folder in about a
second; one server serves the whole session (its fixtures are registered once, in
``conftest.py``), with the team schema made by the same
``admin`` code an administrator runs. Each test makes its own people and projects
(``Team``), so tests never see each other's rows. The server is reached over a Unix
socket, where pgserver trusts every role: a person's password is set all the same, as a
real deployment would, and row-level security, not authentication, is what is tested.

The workers that tests run in processes of their own are in ``pg_workers.py``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from jupymem.storage.postgres import admin


def user_url(admin_url: str, role: str, password: str) -> str:
    """``admin_url`` with another role's credentials."""
    from psycopg.conninfo import make_conninfo

    return make_conninfo(admin_url, user=role, password=password)


@pytest.fixture(scope="session")
def pg_admin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The administrator's URL of a running PostgreSQL with the team schema in it."""
    pgserver = pytest.importorskip("pgserver", reason="pgserver is not installed: pip install -e '.[test]'")
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[team]'")
    folder: Path = tmp_path_factory.mktemp("pgdata")
    server = pgserver.get_server(str(folder), cleanup_mode="stop")
    try:
        url = server.get_uri()
        admin.create_schema(url)
        yield url
    finally:
        server.cleanup()


@dataclass
class Team:
    """People and projects made for one test, named so that no other test's collide."""

    admin_url: str
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:8])

    def person(self, name: str) -> str:
        """A login role for ``name``; its connection URL."""
        role = f"{name}_{self.tag}"
        admin.create_user(self.admin_url, role, password=f"pw-{role}")
        return user_url(self.admin_url, role, f"pw-{role}")

    def role(self, name: str) -> str:
        return f"{name}_{self.tag}"

    def project(self, name: str, *members: str) -> str:
        project = f"{name}-{self.tag}"
        for member in members:
            admin.add_member(self.admin_url, project, self.role(member))
        return project


@pytest.fixture
def team(pg_admin: str) -> Team:
    return Team(pg_admin)


# -- two people in clones of one repository ----------------------------------------------


def admitted_pair(tmp_path: Path, team: Team, person: Any) -> tuple[Any, Any]:
    """Ola and Kari, each in a clone of one repository with a home of their own, both
    admitted to its project (its root commit): ``person(team, name, clone, home)``."""
    import os
    import subprocess

    from conftest import GIT_ENV, make_repo
    from jupymem.storage import registry

    origin = make_repo(tmp_path / "origin")
    people = []
    for name in ("ola", "kari"):
        clone = tmp_path / name / "analysis"
        subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True, env={**os.environ, **GIT_ENV})
        people.append(person(team, name, clone.resolve(), tmp_path / f"{name}-home"))
    key = registry.root_commit(origin)
    assert key and all(registry.root_commit(p.clone) == key for p in people)
    for p in people:
        admin.add_member(team.admin_url, key, p.role)
    return people[0], people[1]
