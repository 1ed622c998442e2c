"""The shared fixtures are what they say: ``make_repo`` writes its first commit itself
(``conftest._first_commit``), so git is asked here whether that is a repository it reads
as its own ``git commit`` would have left it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import make_repo


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def test_make_repo_leaves_a_first_commit_git_checks_and_reads(tmp_path: Path) -> None:
    one, two = make_repo(tmp_path / "one"), make_repo(tmp_path / "two")
    for repo in (one, two):
        git(repo, "fsck", "--strict", "--no-dangling")
        assert git(repo, "status", "--porcelain") == ""  # the README committed, nothing staged or changed
        assert git(repo, "ls-tree", "--name-only", "HEAD").split() == ["README.md"]
        assert git(repo, "log", "--format=%an <%ae>|%s").splitlines() == [
            f"Test <test@example.com>|first: a test repository at {repo}"]
        assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    roots = {git(repo, "rev-list", "--max-parents=0", "HEAD") for repo in (one, two)}
    assert len(roots) == 2  # two repositories, two root commits: neither is taken for the other moved

    # and git builds on it as on its own commit
    (one / "notes.md").write_text("more\n")
    git(one, "add", "notes.md")
    git(one, "-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "second")
    assert git(one, "rev-list", "--count", "HEAD").strip() == "2"


def test_make_repo_without_a_commit_is_an_empty_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "empty", commit=False)
    assert subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True).returncode != 0
    assert git(repo, "status", "--porcelain") == ""
