"""Who writes here: git's answer is kept in the memory home for the next command, and a
kept answer is believed only while the environment and git's config files are unchanged.

Each case runs in a child interpreter with an environment of its own (no GIT_AUTHOR_*,
its own HOME), so that what is asked of git, and when, is real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import make_repo

ROOT = Path(__file__).resolve().parents[1]

ASK = """
import sys
from pathlib import Path
from jupymem.sharing import identity
who = identity.identity(Path(sys.argv[2]), Path(sys.argv[1]))
print(who if who else "nobody")
"""


def _env(tmp_path: Path, *, git: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(tmp_path / "user"), XDG_CONFIG_HOME=str(tmp_path / "user" / ".config"),
               PYTHONPATH=str(ROOT), GIT_CONFIG_NOSYSTEM="1")
    if not git:  # a PATH without git: only a kept answer can say who writes
        env["PATH"] = str(tmp_path / "no-git")
    return env


def _who(tmp_path: Path, repo: Path, home: Path, *, git: bool = True) -> str:
    out = subprocess.run([sys.executable, "-c", ASK, str(home), str(repo)], capture_output=True, text=True,
                         env=_env(tmp_path, git=git), check=True)
    return out.stdout.strip()


def _set_name(repo: Path, name: str) -> None:
    subprocess.run(["git", "-C", str(repo), "config", "user.name", name], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "user.email", "ada@example.com"], check=True)


def _ada_writes(tmp_path: Path) -> tuple[Path, Path]:
    """(a repository whose git config names Ada, an empty memory home)."""
    (tmp_path / "user").mkdir()
    repo, home = make_repo(tmp_path / "repo"), tmp_path / "home"
    home.mkdir()
    _set_name(repo, "Ada Lovelace")
    return repo, home


def test_the_answer_is_kept_for_the_next_process_and_asked_again_after_a_change(tmp_path: Path) -> None:
    repo, home = _ada_writes(tmp_path)
    assert _who(tmp_path, repo, home) == "Ada Lovelace <ada@example.com>"
    assert (home / "identities.json").stat().st_mode & 0o077 == 0  # private, as the registry is
    # Without git on PATH, the kept answer is all there is: it is given.
    assert _who(tmp_path, repo, home, git=False) == "Ada Lovelace <ada@example.com>"
    # A changed config file: the kept answer is stale and git is asked again.
    _set_name(repo, "Ada King")
    assert _who(tmp_path, repo, home) == "Ada King <ada@example.com>"
    assert _who(tmp_path, repo, home, git=False) == "Ada King <ada@example.com>"


def test_a_kept_answer_is_not_believed_when_the_environment_differs(tmp_path: Path) -> None:
    repo, home = _ada_writes(tmp_path)
    assert _who(tmp_path, repo, home) == "Ada Lovelace <ada@example.com>"
    env = {**_env(tmp_path), "GIT_AUTHOR_NAME": "Grace Hopper"}
    out = subprocess.run([sys.executable, "-c", ASK, str(home), str(repo)], capture_output=True, text=True,
                         env=env, check=True)
    assert out.stdout.strip() == "Grace Hopper <ada@example.com>"


def test_a_garbled_or_forged_kept_file_only_means_git_is_asked(tmp_path: Path) -> None:
    repo, home = _ada_writes(tmp_path)
    kept = home / "identities.json"
    for bad in (b"\xff\xfe not json", b"[1, 2]", json.dumps({str(repo): [[], "Mallory", None]}).encode(),
                json.dumps({str(repo): "Mallory"}).encode()):
        kept.write_bytes(bad)
        assert _who(tmp_path, repo, home) == "Ada Lovelace <ada@example.com>"
    # An entry whose key matches but whose name is not a short string is not believed either.
    entry = json.loads(kept.read_text())[str(repo)]
    kept.write_text(json.dumps({str(repo): [entry[0], "x" * 5000, None]}))
    assert _who(tmp_path, repo, home) == "Ada Lovelace <ada@example.com>"


def test_a_read_only_home_still_says_who_writes(tmp_path: Path) -> None:
    repo, home = _ada_writes(tmp_path)
    home.chmod(0o500)
    try:
        assert _who(tmp_path, repo, home) == "Ada Lovelace <ada@example.com>"
    finally:
        home.chmod(0o700)
    assert not (home / "identities.json").exists() or os.geteuid() == 0  # root writes anyway
    assert [p.name for p in home.iterdir() if p.name.endswith(".tmp")] == []
