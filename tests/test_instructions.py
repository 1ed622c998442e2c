"""``jupymem instructions``: AGENTS.md (CLAUDE.md, .github/copilot-instructions.md) in step
with memory, and the rules already written there imported once. Real files in a real git
repository, a real SQLite memory, the real command line (in this process: ``cli_run``).

The round trip of issue 33: a hand-written file with rules is imported (each rule once),
the managed section is written, a second run changes no byte, a new memory changes only
the section, the check fails on a stale section and passes after, and a secret and a
private memory never reach the section. Then hostile files: links out of the repository,
binary, not UTF-8, huge, markers duplicated or unbalanced, read-only.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_run import jm

SECRET = "ghp_" + "Q7rT2mVx9LkP4sWz8NcB6yHd3FgJ1aE5uK0o"  # a GitHub token's shape, split so no scanner flags this file
PRIVATE = "My own scratch bucket is s3-scratch-for-alice, not for the team."

# Hand-written, as people write them: LF endings and no final newline.
AGENTS = (
    "# Working in this repository\n"
    "\n"
    "Notebooks live in notebooks/ and the data in data/. This paragraph is prose:\n"
    "it explains things and is no rule.\n"
    "\n"
    "## Rules\n"
    "\n"
    "- Never write to data/raw; it is read-only.\n"
    "- **Always** set the random seed to 42 in notebooks that sample.\n"
    "- Setup:\n"
    "  - Run `make env` before opening the notebooks.\n"
    "* pandas\n"
    f"- The deploy token is {SECRET} for now.\n"
    "1. Prefer parquet over csv for intermediate tables,\n"
    "   because the dtypes survive.\n"
    "\n"
    "```bash\n"
    "- echo this is code, not a rule\n"
    "```\n"
    "\n"
    "## Style\n"
    "\n"
    "Use ruff before every commit.\n"
    "Keep each notebook under 50 cells."
)
CLAUDE = "# Claude\r\n\r\n- Never write to data/raw; it is read-only.\r\n- Do not print dataframes longer than 20 rows.\r\n"


def split(data: bytes) -> tuple[bytes, bytes, bytes]:
    """(before the section, the section from its begin line to its end line, after it)."""
    start = data.index(b"<!-- jupymem:begin")
    end = data.index(b"<!-- jupymem:end -->") + len(b"<!-- jupymem:end -->")
    return data[:start], data[start:end], data[end:]


def memories(repo: Path) -> list[dict]:
    done = jm("list", "--all", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def run(repo: Path, *args: str, code: int = 0) -> str:
    done = jm("instructions", *args, cwd=repo)
    assert done.returncode == code, (done.stdout, done.stderr)
    assert b"Traceback" not in done.stderr
    return (done.stdout + done.stderr).decode()


def test_the_round_trip(repo: Path) -> None:
    agents, claude = repo / "AGENTS.md", repo / "CLAUDE.md"
    agents.write_bytes(AGENTS.encode())
    claude.write_bytes(CLAUDE.encode())
    assert "nothing to check" in run(repo, "--check")  # no memory and no section: nothing to say

    said = run(repo, "--import")
    got = {(m["provenance"]["notebook"], m["provenance"]["cell_id"]): m for m in memories(repo)}
    assert {k: (m["kind"], m["statement"]) for k, m in got.items()} == {
        ("AGENTS.md", "L8"): ("constraint", "Never write to data/raw; it is read-only."),
        ("AGENTS.md", "L9"): ("constraint", "Always set the random seed to 42 in notebooks that sample."),
        ("AGENTS.md", "L11"): ("note", "Run `make env` before opening the notebooks."),
        ("AGENTS.md", "L14"): ("note", "Prefer parquet over csv for intermediate tables, because the dtypes survive."),
        ("AGENTS.md", "L23"): ("note", "Use ruff before every commit."),
        ("AGENTS.md", "L24"): ("note", "Keep each notebook under 50 cells."),
        ("CLAUDE.md", "L4"): ("constraint", "Do not print dataframes longer than 20 rows."),
    }  # CLAUDE.md's first rule is AGENTS.md's: one memory
    assert all(m["standing"] == "supported" and m["provenance"]["recorder"] == "person" for m in got.values())
    assert "Refused AGENTS.md:13" in said and "GitHub token" in said and SECRET not in said
    assert "1 already in memory" in said
    assert "AGENTS.md line 8" in jm("show", got[("AGENTS.md", "L8")]["id"], cwd=repo).stdout.decode()

    # The section is written; what people wrote is untouched, byte for byte (no final newline, CRLF).
    first_agents, first_claude = agents.read_bytes(), claude.read_bytes()
    assert first_agents.startswith(AGENTS.encode() + b"\n\n<!-- jupymem:begin")
    assert first_claude.startswith(CLAUDE.encode() + b"\r\n<!-- jupymem:begin")
    before, section, after = split(first_claude)
    assert b"\n" not in section.replace(b"\r\n", b"") and after == b"\r\n"  # the file's own line endings
    assert b"- constraint: Never write to data/raw; it is read-only." in section
    for data in (first_agents, first_claude):
        assert SECRET.encode() not in split(data)[1]
        assert split(data)[1].count(b"Never write to data/raw") == 1

    # A second run, and a second import, change no byte; the check passes.
    assert "In step" in run(repo)
    assert "Imported 0 rules" in run(repo, "--import") and agents.read_bytes() == first_agents
    assert claude.read_bytes() == first_claude
    run(repo, "--check")
    assert len(memories(repo)) == 7

    # A private memory never reaches the files, and does not make them stale.
    assert jm("remember", "--private", PRIVATE, cwd=repo).returncode == 0
    run(repo, "--check")
    run(repo)
    assert agents.read_bytes() == first_agents and b"s3-scratch" not in agents.read_bytes()

    # A new memory: the check fails (and writes nothing), the next run changes only the section.
    assert jm("remember", "--kind", "decision", "We keep one environment.yml at the root.", cwd=repo).returncode == 0
    assert "Not in step" in run(repo, "--check", code=1)
    assert agents.read_bytes() == first_agents
    run(repo)
    for path, first in ((agents, first_agents), (claude, first_claude)):
        old, new = split(first), split(path.read_bytes())
        assert (new[0], new[2]) == (old[0], old[2]) and new[1] != old[1]
        assert b"- decision: We keep one environment.yml at the root." in new[1]
    run(repo, "--check")

    # Someone edits the section by hand: it is stale, and put back.
    edited = agents.read_bytes().replace(b"- decision: We keep", b"- decision: We no longer keep")
    agents.write_bytes(edited)
    run(repo, "--check", code=1)
    run(repo)
    assert b"We no longer keep" not in agents.read_bytes()

    # Retired memories are not imported again either.
    seed = got[("AGENTS.md", "L9")]["id"]
    assert jm("retire", seed, "--reason", "we sample without a seed now", cwd=repo).returncode == 0
    run(repo, "--import")
    assert [m["status"] for m in memories(repo) if m["id"] == seed] == ["retired"]


def test_a_repository_without_agents_md_gets_one_and_the_magic_does_the_same(repo: Path, shell) -> None:
    assert jm("remember", "--kind", "constraint", "Never write to data/raw.", cwd=repo).returncode == 0
    (repo / ".github").mkdir()
    copilot = repo / ".github" / "copilot-instructions.md"
    copilot.write_text("Use type hints in every function.")
    shell.run_line_magic("memory", "instructions --check")  # stale: says so, writes nothing
    assert not (repo / "AGENTS.md").exists()
    shell.run_line_magic("memory", "instructions")
    data = (repo / "AGENTS.md").read_bytes()
    assert data.startswith(b"<!-- jupymem:begin") and data.endswith(b"<!-- jupymem:end -->\n")
    assert b"- constraint: Never write to data/raw." in data
    assert copilot.read_bytes().startswith(b"Use type hints in every function.\n\n<!-- jupymem:begin")
    assert not (repo / "CLAUDE.md").exists()  # kept only where the repository has it
    with pytest.raises(Exception, match="give one of them"):
        shell.run_line_magic("memory", "instructions --check --import")


def test_without_memory_nothing_is_written(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("# Notes\n\nSome prose only.\n")
    assert "no memory" in run(repo, code=2)
    assert "no memory" in run(repo, "--import")  # no rule to keep: memory is not started either
    assert (repo / "AGENTS.md").read_text() == "# Notes\n\nSome prose only.\n"
    assert jm("status", "--json", cwd=repo).stdout and not json.loads(jm("status", "--json", cwd=repo).stdout)["memory"]


def test_a_link_inside_the_repository_is_one_file(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("- Never commit notebooks with outputs.\n")
    os.symlink("AGENTS.md", repo / "CLAUDE.md")
    run(repo, "--import")
    assert (repo / "CLAUDE.md").is_symlink()
    assert (repo / "AGENTS.md").read_text().count("<!-- jupymem:begin") == 1
    assert len(memories(repo)) == 1


@pytest.mark.parametrize("hostile", ["link-out", "link-dangling", "folder-out", "binary", "latin-1", "huge",
                                     "two-begins", "no-end", "end-first"])
def test_hostile_files_are_refused_and_nothing_changes(repo: Path, tmp_path: Path, hostile: str) -> None:
    assert jm("remember", "Use pandas 2 for every frame.", cwd=repo).returncode == 0
    outside = tmp_path / "outside.md"
    outside.write_text("- Never trust this line from outside.\n")
    claude = repo / "CLAUDE.md"
    claude.write_text("- Keep notebooks small and focused.\n")
    agents = repo / "AGENTS.md"
    section = "<!-- jupymem:begin revision=000000000000 -->\nold\n<!-- jupymem:end -->\n"
    if hostile == "link-out":
        os.symlink(outside, agents)
    elif hostile == "link-dangling":
        os.symlink(tmp_path / "gone.md", agents)
    elif hostile == "folder-out":
        claude.unlink()
        os.symlink(tmp_path, repo / ".github")
        (tmp_path / "copilot-instructions.md").write_text("- Never trust this line from outside.\n")
    elif hostile == "binary":
        agents.write_bytes(b"- Use this rule always please.\n\x00\x01\x02")
    elif hostile == "latin-1":
        agents.write_bytes("- Never use caf\u00e9 as a column name.\n".encode("latin-1"))
    elif hostile == "huge":
        agents.write_bytes(b"- Never write to data/raw at any time.\n" * 30000)
    elif hostile == "two-begins":
        agents.write_text("- Never write to data/raw at any time.\n" + section + section)
    elif hostile == "no-end":
        agents.write_text("- Never write to data/raw at any time.\n" + section.split("old")[0])
    elif hostile == "end-first":
        agents.write_text("<!-- jupymem:end -->\n- Never write to data/raw.\n<!-- jupymem:begin revision=0 -->\n")
    files = sorted(p for p in [*repo.rglob("*.md"), *tmp_path.glob("*.md")] if ".git" not in p.parts)
    before = {p: p.read_bytes() for p in files if p.exists()}
    count = len(memories(repo))
    for args in ((), ("--import",), ("--check",)):
        said = run(repo, *args, code=2)
        assert {"link-out": "outside the repository", "link-dangling": "leads nowhere", "folder-out": "outside the repository",
                "binary": "binary", "latin-1": "not UTF-8", "huge": "at most", "two-begins": "markers out of order",
                "no-end": "markers out of order", "end-first": "markers out of order"}[hostile] in said
    assert {p: p.read_bytes() for p in files if p.exists()} == before
    assert len(memories(repo)) == count


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` unwritable for this process, for real: root ignores modes, so as root the
    file gets the immutable attribute (``chattr +i``); proven before it is relied on."""
    if os.geteuid() == 0:
        chattr = shutil.which("chattr")
        if chattr is None:
            pytest.skip("running as root without chattr: no way to make a file read-only")
        subprocess.run([chattr, "+i", str(path)], check=True)
        undo = [chattr, "-i", str(path)]
    else:
        path.chmod(0o444)
        undo = []
    try:
        if os.access(path, os.W_OK):
            pytest.skip(f"{path} could not be made read-only here")
        yield
    finally:
        if undo:
            subprocess.run(undo, check=True)
        else:
            path.chmod(0o644)


def test_a_read_only_file_is_not_written_and_nothing_is_imported(repo: Path) -> None:
    agents = repo / "AGENTS.md"
    agents.write_text("- Never write to data/raw at any time.\n")
    assert jm("remember", "Use pandas 2 for every frame.", cwd=repo).returncode == 0
    with read_only(agents):
        assert "read-only" in run(repo, code=2)
        assert "read-only" in run(repo, "--import", code=2)
        run(repo, "--check", code=1)  # checking needs no write
    assert agents.read_text() == "- Never write to data/raw at any time.\n"
    assert [m["statement"] for m in memories(repo)] == ["Use pandas 2 for every frame."]


def test_rules_other_entrances_refuse_are_refused_here_too(repo: Path) -> None:
    long_item = "- Never " + "really " * 80 + "do this.\n"
    (repo / "AGENTS.md").write_text(
        "- Nunca escribas en la carpeta data/raw, es de solo lectura.\n"  # no model to translate it
        "- Never write to data/raw; it is read-only.\n"
        "- Keep\u202e this line reversed for readers.\n"  # a bidi control: hidden text
        + long_item
    )
    said = run(repo, "--import")
    assert "Refused AGENTS.md:1" in said and "JUPYMEM_MODEL" in said
    assert "Refused AGENTS.md:3" in said
    assert "1 list item too long to be a rule" in said
    assert [m["statement"] for m in memories(repo)] == ["Never write to data/raw; it is read-only."]


def test_a_document_of_bullets_is_not_a_list_of_rules(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("".join(f"- Step {i} of the long procedure here.\n" for i in range(600)))
    assert "is a document" in run(repo, "--import", code=2)
    assert not json.loads(jm("status", "--json", cwd=repo).stdout)["memory"]
