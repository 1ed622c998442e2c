"""A small team for the sharing tests: a bare remote, clones, and one person per clone.

Each ``Clone`` has its own working tree, its own ``JUPYMEM_HOME`` and its own git
identity (per-clone ``git config``), and runs the real ``jupymem`` command line in a
subprocess, so every test drives what a person at a terminal would.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cli_run

ROOT = Path(__file__).resolve().parents[1]


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed in {cwd}:\n{proc.stdout}\n{proc.stderr}")
    return proc


@dataclass
class Clone:
    path: Path
    home: Path
    name: str
    email: str

    @property
    def identity(self) -> str:
        return f"{self.name} <{self.email}>"

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return git(self.path, *args, check=check)

    def jm(self, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
        return cli_run.jm(*args, cwd=self.path, input=input,
                          env={"JUPYMEM_HOME": str(self.home), "JUPYMEM_ENCODER": "none"})

    def ok(self, *args: str) -> str:
        proc = self.jm(*args)
        assert proc.returncode == 0, (args, proc.stdout.decode(), proc.stderr.decode())
        return proc.stdout.decode()

    def json(self, *args: str) -> Any:
        return json.loads(self.ok(*args, "--json"))

    def remember(self, text: str, *flags: str) -> dict[str, Any]:
        return self.json("remember", text, *flags)

    def listed(self) -> list[dict[str, Any]]:
        return self.json("list", "--all")

    def commit(self, message: str) -> None:
        self.git("add", "-A", ".jupymem")
        self.git("commit", "-q", "-m", message)

    def pull(self) -> subprocess.CompletedProcess:
        """Fetch and merge; the test asserts that no conflict was left."""
        proc = self.git("pull", "-q", "--no-rebase", "--no-edit", "origin", "main", check=False)
        unmerged = self.git("diff", "--name-only", "--diff-filter=U").stdout.strip()
        assert proc.returncode == 0 and not unmerged, f"git pull conflicted:\n{proc.stdout}{proc.stderr}\n{unmerged}"
        return proc

    def push(self) -> None:
        self.git("push", "-q", "origin", "HEAD:main")

    def log_files(self) -> list[Path]:
        folder = self.path / ".jupymem" / "log"
        return sorted(folder.glob("*.jsonl")) if folder.exists() else []

    def shared_text(self) -> str:
        """Everything under .jupymem/, as text."""
        folder = self.path / ".jupymem"
        return "".join(p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*")) if p.is_file())


def make_team(base: Path, *people: tuple[str, str]) -> list[Clone]:
    """A bare remote with one commit, and one clone (and home) per person."""
    base.mkdir(parents=True, exist_ok=True)
    remote = base / "remote.git"
    git(base, "init", "-q", "--bare", "-b", "main", str(remote))
    seed = base / "seed"
    git(base, "clone", "-q", str(remote), str(seed))
    (seed / "README.md").write_text(f"# a shared analysis at {base}\n")
    git(seed, "add", "README.md")
    git(seed, "-c", "user.name=Seed", "-c", "user.email=seed@example.com", "commit", "-q", "-m", "first")
    git(seed, "push", "-q", "origin", "HEAD:main")
    clones = []
    for name, email in people:
        path = base / name.lower()
        git(base, "clone", "-q", str(remote), str(path))
        git(path, "config", "user.name", name)
        git(path, "config", "user.email", email)
        clones.append(Clone(path.resolve(), base / f"home-{name.lower()}", name, email))
    return clones
