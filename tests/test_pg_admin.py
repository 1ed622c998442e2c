"""A team database administered through the command line (``jupymem team``), as the README
tells an administrator to: the schema, a person's login role, admitting them to one
repository's memory and taking that away; every mistake is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_run import jm
from conftest import make_repo
from pg_server import user_url


pytestmark = pytest.mark.postgres


def test_an_administrator_admits_a_person_who_then_records_and_is_then_removed(
    pg_admin: str, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    admin_env = {"JUPYMEM_HOME": str(tmp_path / "admin-home")}

    def team(*args: str, stdin: bytes | None = None) -> str:
        done = jm("team", *args, "--database", pg_admin, cwd=repo, env=admin_env, input=stdin)
        assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode()
        return done.stdout.decode()

    assert "at version" in team("setup") and "at version" in team("setup")  # safe to repeat
    role = f"nora_{tmp_path.name[-6:]}"
    assert "can log in" in team("user", role, "--password-stdin", stdin=b"s3cret-pw\n")
    assert "admitted to repo's memory" in team("admit", role)

    nora = {"JUPYMEM_HOME": str(tmp_path / "nora-home"), "JUPYMEM_DATABASE_URL": user_url(pg_admin, role, "s3cret-pw")}
    recorded = jm("--json", "remember", "Quarterly revenue is reported in EUR.", cwd=repo, env=nora)
    assert recorded.returncode == 0, recorded.stderr.decode()
    status = json.loads(jm("--json", "status", cwd=repo, env=nora).stdout)
    assert status["engine"]["name"] == "postgresql" and status["total"] == 1
    assert "s3cret-pw" not in json.dumps(status)

    assert "no longer reaches" in team("remove", role)
    refused = jm("list", cwd=repo, env=nora)
    err = refused.stderr.decode()
    assert refused.returncode != 0 and err.startswith("jupymem: ") and err.count("\n") == 1, err
    assert "member" in err


def test_administration_mistakes_are_one_line(pg_admin: str, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    env = {"JUPYMEM_HOME": str(tmp_path / "home")}
    for args in (["team", "setup"], ["team", "admit", "--database", pg_admin],
                 ["team", "admit", "ghost", "--database", pg_admin, "--path", str(tmp_path)]):
        done = jm(*args, cwd=repo, env=env)
        err = done.stderr.decode()
        assert done.returncode == 2 and err.startswith("jupymem: ") and err.count("\n") == 1, (args, err)
