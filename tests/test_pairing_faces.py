"""A failure and its fix in every face: the kernel hook (a real InteractiveShell), the
model's suggestion (a loopback fake), %memory evidence / show, the CLI, REST and %%ask.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, system_prompt
from IPython.core.interactiveshell import InteractiveShell

import jupymem
from jupymem.assistants.inject import FAILURES, failures_section
from jupymem.faces import render
from jupymem.faces.kernel import session_evidence, session_state
from jupymem.intake.pairing import Pairing

from conftest import in_fresh_shell, loaded_shell

pytest_plugins = ["pytest_jupyter.jupyter_server"]

SECRET = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
MODEL = "openai/fake"
ROOT = Path(__file__).resolve().parents[1]


def fail_then_fix(ip: InteractiveShell, cell_id: str | None = "c1") -> tuple[Any, Any]:
    ip.run_cell('sales = {"customer_id": [1, 2]}', store_history=True)
    failed = ip.run_cell('sales["custid"]', store_history=True, cell_id=cell_id)
    assert not failed.success
    fixed = ip.run_cell('sales["customer_id"]', store_history=True, cell_id=cell_id)
    assert fixed.success
    return failed, fixed


# -- the hook ------------------------------------------------------------------------------


def test_rapidfuzz_waits_for_the_first_comparison(repo: Path) -> None:
    """%load_ext, successes and a first failure import no rapidfuzz; a success without a
    cell id while a failure waits does (and pairs)."""
    out = in_fresh_shell(repo, (
        "ip.run_cell('x = 1')\n"
        "print('rapidfuzz' in sys.modules)\n"
        "ip.run_cell('xs = [2, 1]\\nxs.sortt()')\n"
        "print('rapidfuzz' in sys.modules)\n"
        "ip.run_cell('xs = [2, 1]\\nxs.sort()')\n"
        "print('rapidfuzz' in sys.modules)\n"
        "from jupymem.faces.kernel import session_evidence\n"
        "print(session_evidence(ip)[0].fix is not None)\n"
    ))
    assert [line for line in out.splitlines() if line in ("True", "False")][-4:] == ["False", "False", "True", "True"]


def test_a_pair_reaches_the_window_and_the_database(shell: InteractiveShell, repo: Path) -> None:
    proj = jupymem.init(repo)
    seen = [jupymem.status(repo).staged_revision]
    shell.run_cell("x = 1")
    seen.append(jupymem.status(repo).staged_revision)
    failed, fixed = fail_then_fix(shell)
    seen.append(jupymem.status(repo).staged_revision)
    # Staging and pairing are not events in memory's log, so the sidebar watches this too.
    assert seen == [0, 0, 2] and proj.revision() == 0
    (ev,) = session_evidence(shell)
    (stored,) = proj.staged_evidence()
    assert stored == ev
    assert ev.execution_count == failed.execution_count
    assert ev.fix.execution_count == fixed.execution_count and ev.fix.cell_id == "c1"
    assert ev.suggestion == "`sales[\"custid\"]` raised KeyError 'custid'; the fix used `sales[\"customer_id\"]`."
    assert proj.list() == []  # nothing enters memory by itself


def test_a_pair_made_before_memory_exists_is_kept_when_cited(shell: InteractiveShell, repo: Path) -> None:
    fail_then_fix(shell, cell_id=None)
    assert jupymem.project(repo) is None  # pairing, like staging, never creates memory
    (ev,) = session_evidence(shell)
    assert ev.fix is not None and ev.fix.paired_by.startswith("similarity")
    result = shell.run_cell(f"%%remember --kind failure --evidence last\n{ev.suggestion}")
    assert result.success, result.error_in_exec
    (m,) = jupymem.project(repo).list()
    assert m.statement == ev.suggestion and m.kind == "failure"
    assert m.evidence[0].fix == ev.fix


def test_memorys_own_cells_never_fix_a_failure(shell: InteractiveShell, repo: Path) -> None:
    jupymem.init(repo)
    assert not shell.run_cell('{}["custid"]', cell_id="c1").success
    for own in ("%memory evidence", "%%remember --kind note --evidence last\nThe key is customer_id."):
        assert shell.run_cell(own, cell_id="c1").success
        assert session_evidence(shell)[0].fix is None
    assert shell.run_cell('{"custid": 1}["custid"]', cell_id="c1").success
    assert session_evidence(shell)[0].fix is not None


def test_a_broken_pairing_logs_one_line_and_the_cell_runs(shell: InteractiveShell, caplog) -> None:
    def broken(failed: str, success: str) -> float:
        raise RuntimeError("similarity exploded")

    session_state(shell).pairing = Pairing(similarity=broken)
    assert not shell.run_cell("xs = [2, 1]\nxs.sortt()").success
    with caplog.at_level(logging.WARNING, logger="jupymem"):
        result = shell.run_cell("xs = [2, 1]\nxs.sort()")
    assert result.success and shell.user_ns["xs"] == [1, 2]
    lines = [r.getMessage() for r in caplog.records if r.name == "jupymem"]
    assert lines == ["jupymem: could not pair this cell with the failure it fixed: similarity exploded"]


# -- the model's suggestion ------------------------------------------------------------------


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    with FakeOpenAI() as server:
        monkeypatch.setenv("OPENAI_API_BASE", server.url)
        monkeypatch.setenv("JUPYMEM_MODEL", MODEL)
        yield server


def test_the_model_rewrites_the_suggestion_without_holding_up_the_cell(
    shell: InteractiveShell, repo: Path, fake: FakeOpenAI
) -> None:
    proj = jupymem.init(repo)
    lesson = "The sales extract names the key `customer_id`, never `custid`."
    fake.say(lesson)
    fake.gate.clear()  # the model answers only when the test lets it
    try:
        shell.run_cell(f'token = "{SECRET}"\nsales = {{"customer_id": [1]}}\nsales["custid"]')
        assert shell.run_cell(f'token = "{SECRET}"\nsales = {{"customer_id": [1]}}\nsales["customer_id"]').success
        # The cell is done; the model has not answered: the pair's own sentence stands.
        (ev,) = session_evidence(shell)
        assert ev.suggested_by == "pair" and "KeyError 'custid'" in ev.suggestion
    finally:
        fake.gate.set()
    assert session_state(shell).wait_for_suggestions(timeout=120)
    (ev,) = session_evidence(shell)
    assert (ev.suggestion, ev.suggested_by) == (lesson, MODEL)
    assert proj.staged_evidence()[0] == ev
    assert proj.list() == []
    (request,) = fake.chat_requests()
    sent = json.dumps(request)
    assert SECRET not in sent  # the model sees the redacted pair only
    user = next(m["content"] for m in request["messages"] if m["role"] == "user")
    assert '-sales["custid"]' in user and '+sales["customer_id"]' in user and "KeyError: 'custid'" in user


def test_a_model_that_fails_leaves_the_pairs_suggestion(shell: InteractiveShell, fake: FakeOpenAI, caplog) -> None:
    fake.say("")  # an empty answer
    with caplog.at_level(logging.WARNING, logger="jupymem"):
        fail_then_fix(shell, cell_id=None)
        assert session_state(shell).wait_for_suggestions(timeout=120)
    (ev,) = session_evidence(shell)
    assert ev.suggested_by == "pair" and "KeyError 'custid'" in ev.suggestion
    (line,) = [r.getMessage() for r in caplog.records if r.name == "jupymem"]
    assert line.startswith(f"jupymem: the model could not suggest a lesson for {ev.handle}")


# -- %memory evidence, show, render ------------------------------------------------------------


def test_memory_evidence_and_show_say_fixed_in_with_the_diff(shell: InteractiveShell, repo: Path, capsys) -> None:
    proj = jupymem.init(repo)
    failed, fixed = fail_then_fix(shell)
    capsys.readouterr()
    shell.run_cell("%memory evidence")
    out = capsys.readouterr().out
    (ev,) = proj.staged_evidence()
    assert f"fixed in [{fixed.execution_count}]:" in out
    assert '  -sales["custid"]' in out and '  +sales["customer_id"]' in out
    assert f"suggested lesson: {ev.suggestion}" in out
    m = proj.remember("The key is customer_id, never custid.", kind="failure", evidence=[ev.handle])
    shell.run_cell(f"%memory show {m.id}")
    shown = capsys.readouterr().out
    assert f"fixed in [{fixed.execution_count}]:" in shown and '+sales["customer_id"]' in shown


def test_html_shows_the_diff_escaped_and_tinted(shell: InteractiveShell) -> None:
    shell.run_cell("html = '<b>'\nhtml.uper()", cell_id="c1")
    shell.run_cell("html = '<b>'\nhtml.upper()", cell_id="c1")
    (ev,) = session_evidence(shell)
    page = render.evidence_html([ev])
    assert "+html.upper()" in page and "-html.uper()" in page
    assert "<b>" not in page.replace("<b>fixed", "") and "&lt;b&gt;" in page  # record text is escaped
    assert "rgba(46,160,67" in page and "rgba(248,81,73" in page  # added and removed lines tinted
    assert "suggested lesson:" in page


# -- the command line ------------------------------------------------------------------------


def jm(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "jupymem.faces.cli", *args], cwd=cwd, capture_output=True, env=env,
                          timeout=120)


def test_cli_evidence_and_show_carry_the_fix(shell: InteractiveShell, repo: Path) -> None:
    proj = jupymem.init(repo)
    failed, fixed = fail_then_fix(shell)
    (ev,) = proj.staged_evidence()
    listed = jm("evidence", "--json", cwd=repo)
    assert listed.returncode == 0, listed.stderr
    (item,) = json.loads(listed.stdout)
    assert item["suggestion"] == ev.suggestion and item["suggested_by"] == "pair"
    assert item["fix"]["execution_count"] == fixed.execution_count and item["fix"]["cell_id"] == "c1"
    assert item["fix"]["diff"] == ev.fix.diff
    text = jm("evidence", cwd=repo).stdout.decode()
    assert f"fixed in [{fixed.execution_count}]:" in text and f"suggested lesson: {ev.suggestion}" in text
    m = proj.remember(ev.suggestion, kind="failure", evidence=[ev.handle])
    shown = json.loads(jm("show", m.id, "--json", cwd=repo).stdout)
    assert shown["evidence"][0]["fix"] == item["fix"]
    assert '+sales["customer_id"]' in jm("show", m.id, cwd=repo).stdout.decode()


# -- REST ------------------------------------------------------------------------------------


async def test_rest_evidence_keep_and_detail_carry_the_fix(jp_fetch: Any, jp_root_dir: Path, monkeypatch) -> None:
    from conftest import make_repo

    repo = make_repo(Path(jp_root_dir) / "proj")
    proj = jupymem.init(repo)
    monkeypatch.chdir(repo)
    with loaded_shell() as ip:
        failed, fixed = fail_then_fix(ip)

    async def get(*route: str, **params: str) -> Any:
        resp = await jp_fetch("jupymem", "api", *route, params={"path": "proj", **params})
        return json.loads(resp.body)

    (item,) = (await get("evidence"))["evidence"]
    assert item["fix"]["execution_count"] == fixed.execution_count and item["fix"]["paired_by"] == "cell id"
    assert item["suggestion"].startswith("`sales[\"custid\"]` raised KeyError 'custid'")
    resp = await jp_fetch(
        "jupymem", "api", "evidence", item["handle"], "keep", method="POST",
        body=json.dumps({"path": "proj", "statement": item["suggestion"], "kind": "failure"}),
    )
    kept = json.loads(resp.body)
    assert resp.code == 201 and kept["kind"] == "failure" and kept["statement"] == item["suggestion"]
    detail = await get("memories", kept["id"])
    assert detail["memory"]["evidence"][0]["fix"] == item["fix"]
    assert proj.get(kept["id"]).evidence[0].fix.diff == item["fix"]["diff"]


# -- %%ask ------------------------------------------------------------------------------------


def test_ask_lists_fixed_failures_with_their_handles(shell: InteractiveShell, repo: Path, fake: FakeOpenAI) -> None:
    failed, fixed = fail_then_fix(shell)
    (ev,) = session_evidence(shell)
    assert session_state(shell).wait_for_suggestions(timeout=120)  # the fake's "ok" as the model's lesson
    (ev,) = session_evidence(shell)
    for i in range(FAILURES + 2):  # newer failures push it past the newest eight
        shell.run_cell(f"raise ValueError('failure {i}')")
    fake.say("Use customer_id.")
    result = shell.run_cell("%%ask\nWhat went wrong with the sales key?")
    assert result.success, result.error_in_exec
    system = system_prompt(fake.chat_requests()[-1])
    section = system[system.index("<staged_failures>"): system.index("</staged_failures>")]
    assert f"- {ev.handle} (cell [{failed.execution_count}]): KeyError: 'custid'" in section
    assert f"  fixed in [{fixed.execution_count}], the edit:" in section
    assert '    +sales["customer_id"]' in section
    assert f"  suggested lesson: {ev.suggestion}" in section


def test_failures_section_keeps_fixed_failures_past_the_newest(shell: InteractiveShell) -> None:
    fail_then_fix(shell, cell_id="c-fixed")
    for i in range(FAILURES + 6):
        shell.run_cell(f"raise ValueError('unfixed {i}')", cell_id=f"c{i}")
    window = session_evidence(shell)
    text = failures_section(window)
    listed = [line.split()[1] for line in text.splitlines() if line.startswith("- ")]
    assert listed == [e.handle for e in window[:FAILURES]] + [window[-1].handle]
    assert "(+6 older failures)" in text
    assert "fixed in" in text and text.count("suggested lesson:") == 1
