"""The notebook face through a real IPython shell (and one real kernel): every ``%memory``
action, the one-line answer of a record, near-duplicates, the staged-failure notice,
and input errors that change nothing."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from nbclient import NotebookClient

import jupymem
from jupymem.faces.kernel import session_evidence
from jupymem.models import Provenance


def run(ip: InteractiveShell, code: str) -> str:
    """Run a cell that must succeed; what it showed as text."""
    with capture_output() as cap:
        result = ip.run_cell(code, store_history=True)
    assert result.success, result.error_in_exec or result.error_before_exec
    return cap.stdout + "".join(o.data.get("text/plain", "") + "\n" for o in cap.outputs)


def fails(ip: InteractiveShell, code: str) -> str:
    """Run a cell that must fail with a UsageError; its message."""
    with capture_output():
        result = ip.run_cell(code, store_history=True)
    assert isinstance(result.error_in_exec, UsageError), result.error_in_exec
    return str(result.error_in_exec)


def html_of(ip: InteractiveShell, code: str) -> list[str]:
    with capture_output() as cap:
        assert ip.run_cell(code, store_history=True).success
    return [o.data["text/html"] for o in cap.outputs if "text/html" in o.data]


# -- recording answers in one line ---------------------------------------------------------


def test_remember_answers_in_one_line_and_show_has_the_details(shell, repo) -> None:
    out = run(shell, "%%remember --kind decision --topic joins\nJoin df_sales to df_customers on customer_id; "
                     "email is not unique across accounts, so never join on it.")
    (m,) = jupymem.project(repo).list()
    lines = out.strip().splitlines()
    assert lines == [lines[0]] and lines[0].startswith(f"Remembered {m.id} (decision): Join df_sales")
    assert "…" in lines[0] and "never join on it" not in lines[0]  # clipped; `show` has it whole
    (html,) = html_of(shell, "%%remember --kind decision --topic joins\nJoin df_sales to df_customers on "
                             "customer_id; email is not unique across accounts, so never join on it.")
    assert "Already remembered" in html and m.id in html and "<table" not in html
    shown = run(shell, f"%memory show {m.id}")
    assert "never join on it" in shown and "topic" in shown and "recorded by person" in shown


def test_a_near_duplicate_is_recorded_and_named_with_the_way_to_supersede_it(shell, repo) -> None:
    run(shell, "%%remember --kind constraint\nNever write to data/raw; it is read-only.")
    old = jupymem.project(repo).list()[0]
    out = run(shell, "%%remember --kind constraint\nNever write into data/raw, because it is read-only.")
    proj = jupymem.project(repo)
    assert len(proj.list()) == 2  # still recorded
    new = next(m for m in proj.list() if m.id != old.id)
    assert f"similar to {old.id}; supersede it with --supersedes {old.id}" in out
    assert out.strip().count("\n") == 0  # one line, the hint included
    (html,) = html_of(shell, "%%remember --kind constraint\nNever write into data/raw, because it is read-only.")
    assert f"--supersedes {old.id}" in html
    # Doing what it says, after the fact, gives what --supersedes would have from the start.
    out = run(shell, f"%%remember --supersedes {old.id}\nNever write into data/raw, because it is read-only.")
    assert out.startswith(f"{old.id} superseded by {new.id}") and "similar" not in out
    assert proj.get(old.id).superseded_by == new.id and proj.get(new.id).supersedes == old.id
    assert [m.id for m in proj.list()] == [new.id]
    assert proj.verify().ok  # the tables are what a replay of the log gives


def test_memory_remember_takes_the_same_options_as_the_cli(shell, repo) -> None:
    run(shell, "%memory remember --kind fact --topic fx Rates come from the ECB at 16:00 CET.")
    old = jupymem.project(repo).list()[0]
    out = run(shell, f"%memory remember --supersedes {old.id} Rates come from the ECB at 14:15 CET.")
    new = jupymem.project(repo).get(jupymem.project(repo).get(old.id).superseded_by)
    assert out.startswith(f"{old.id} superseded by {new.id}")
    assert (new.kind, new.topic) == ("fact", "fx")  # the replacement keeps the old kind and topic
    out = run(shell, f"%memory retire {new.id} --reason the ECB stopped publishing")
    assert out.startswith(f"Retired {new.id}") and jupymem.project(repo).get(new.id).retire_reason == \
        "the ECB stopped publishing"


# -- every other action, through the shell --------------------------------------------------


def test_list_show_confirm_evidence_rebuild_gc(shell, repo) -> None:
    proj = jupymem.init(repo)
    person = proj.remember("Plots label the y axis with units.", kind="preference")
    bot = proj.remember("Fiscal years start in April.", kind="fact", provenance=Provenance(recorder="assistant"))
    listed = run(shell, "%memory list")
    assert listed.index("preference (1)") < listed.index("fact (1)")  # block order
    assert "(unconfirmed)" in listed and person.id in listed
    assert "Fiscal" in run(shell, "%memory list --kind fact") and "Plots" not in run(shell, "%memory list --kind fact")

    out = run(shell, f"%memory confirm {bot.id}")
    assert out.startswith(f"Confirmed {bot.id}") and proj.get(bot.id).standing == "supported"
    assert "supported (confirmed" in run(shell, f"%memory show {bot.id}")

    with capture_output():
        shell.run_cell("{}['customer_id']")
    (ev,) = session_evidence(shell)
    evidence = run(shell, "%memory evidence")
    assert ev.handle in evidence and "KeyError: 'customer_id'" in evidence

    proj.retire(person.id, "superseded by the style guide")
    assert "Rebuilt every table and index from 4 events." in run(shell, "%memory rebuild")
    assert proj.verify().ok and proj.get(person.id).status == "retired"
    assert "gc (dry run): would forget 0 memories" in run(shell, "%memory gc --dry-run")
    assert "forgot 0 memories" in run(shell, "%memory gc")  # retention keeps a fresh retirement
    assert [m.id for m in proj.list(include_inactive=True)] == [person.id, bot.id]


def test_export_and_import_through_the_shell(shell, repo, tmp_path) -> None:
    proj = jupymem.init(repo)
    proj.remember("Join on customer_id.", kind="decision")
    proj.remember("Plots use the viridis palette.", kind="preference")
    out = tmp_path / "memory.jsonl"
    assert f"Exported 2 events to {out}." in run(shell, f"%memory export --out {out}")
    assert len(out.read_text().splitlines()) == 3  # a header, then one line per event
    printed = run(shell, "%memory export")
    assert printed.strip().splitlines() == out.read_text().strip().splitlines()

    other = repo.parent / "other"
    from conftest import make_repo

    make_repo(other)
    shell.run_line_magic("cd", str(other))
    assert jupymem.project(other) is None
    # another repository's export: merged on purpose (tests/test_import_origin.py has the refusal)
    assert "import: 2 of 2 events added" in run(shell, f"%memory import --other-project {out}")
    assert sorted(m.statement for m in jupymem.project(other).list()) == sorted(m.statement for m in proj.list())
    assert "0 of 2 events added, 2 already known" in run(shell, f"%memory import --other-project {out}")


def test_import_of_a_missing_file_initializes_nothing(shell, repo, jupymem_home, tmp_path) -> None:
    message = fails(shell, f"%memory import {tmp_path / 'missing.jsonl'}")
    assert "Cannot read" in message and "Nothing was imported" in message
    assert jupymem.project(repo) is None
    assert not (jupymem_home / "registry.json").exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"not": "an export"}\n')
    assert "not a jupymem event" in fails(shell, f"%memory import {bad}")
    assert jupymem.project(repo) is None  # an invalid file initializes nothing either


def test_export_to_a_missing_folder_fails_cleanly_and_writes_nothing(shell, repo, tmp_path) -> None:
    jupymem.init(repo).remember("Join on customer_id.", kind="decision")
    target = tmp_path / "missing" / "dir" / "x.jsonl"
    message = fails(shell, f"%memory export --out {target}")
    assert "Cannot write" in message and "Nothing was exported" in message
    assert not target.parent.exists()
    assert list(tmp_path.glob("**/*.tmp")) == []


# -- the staged-failure notice ----------------------------------------------------------------


def test_a_staged_failure_is_named_in_one_line_and_quiet_turns_it_off(shell, repo, monkeypatch) -> None:
    with capture_output() as cap:
        shell.run_cell("x = 1")
    assert cap.stdout == "" and cap.outputs == []  # a successful cell is untouched
    with capture_output() as cap:
        shell.run_cell("{}['customer_id']")
    (ev,) = session_evidence(shell)
    notice = [line for line in cap.stdout.splitlines() if "jupymem" in line]
    assert len(notice) == 1 and ev.handle in notice[0]
    assert f"%%remember --evidence {ev.handle}" in notice[0]
    assert notice[0].startswith("\x1b[2m")  # dim in a terminal

    assert "without a notice" in run(shell, "%memory quiet")
    with capture_output() as cap:
        shell.run_cell("1/0")
    assert "jupymem" not in cap.stdout and len(session_evidence(shell)) == 2  # staged all the same
    assert "named under its traceback again" in run(shell, "%memory quiet off")
    with capture_output() as cap:
        shell.run_cell("[][1]")
    assert session_evidence(shell)[0].handle in cap.stdout

    monkeypatch.setenv("JUPYMEM_QUIET", "1")
    shell.run_line_magic("unload_ext", "jupymem")  # a new session follows the environment
    shell.run_line_magic("load_ext", "jupymem")
    with capture_output() as cap:
        shell.run_cell("int('x')")
    assert "jupymem" not in cap.stdout and len(session_evidence(shell)) == 1


@pytest.mark.kernel
def test_in_a_real_kernel_the_notice_is_a_dim_line_under_the_traceback(repo: Path) -> None:
    sources = ["%load_ext jupymem", "x = 1", "{}['customer_id']", "%memory quiet", "1/0", "%memory quiet off",
               "[][1]", "%%remember --kind failure --evidence last\nIndexing an empty list raises IndexError."]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(repo)}}).execute()
    outputs = [c["outputs"] for c in nb.cells]
    assert outputs[1] == []  # a successful cell shows nothing from jupymem

    def notices(cell_outputs: list) -> list[str]:
        return [o["data"]["text/html"] for o in cell_outputs
                if o["output_type"] == "display_data" and "jupymem-staged" in o["data"].get("text/html", "")]

    (first,) = notices(outputs[2])
    assert [o["output_type"] for o in outputs[2]] == ["error", "display_data"]  # under the traceback
    assert "opacity" in first and "--evidence ev-" in first
    assert notices(outputs[4]) == []  # quiet
    (again,) = notices(outputs[6])
    handle = again.split("--evidence ")[1][:11]
    # The record answers in one line and cites the failure the notice named.
    (answer,) = [o for o in outputs[7] if o["output_type"] == "display_data"]
    assert answer["data"]["text/plain"].startswith("Remembered m-") and "\n" not in answer["data"]["text/plain"]
    (m,) = jupymem.project(repo).list()
    assert [e.handle for e in m.evidence] == [handle]
