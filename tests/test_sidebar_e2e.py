"""The sidebar end to end: a real ``jupyter lab`` on loopback, driven by headless
Chromium through Playwright, checked against the database after each step.

Needs Debian's chromium at /usr/bin/chromium (``.ci/run`` installs it) and the
built labextension (``pip install -e .`` builds it into jupymem/labextension).
Leaves a screenshot of the sidebar in test-artifacts/sidebar.png.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import jupymem
from jupymem.models import Evidence, Provenance

from conftest import make_repo

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
REPO_ROOT = Path(__file__).resolve().parent.parent
LABEXTENSION = REPO_ROOT / "jupymem" / "labextension"
ARTIFACTS = REPO_ROOT / "test-artifacts"
TOKEN = "jupymem-e2e-token"

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason=f"{CHROMIUM} is missing: `apt-get install chromium` (CI's .ci/run does) to run the browser test",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def notebook_json(cell_ids: list[str]) -> str:
    cells = [
        {"cell_type": "code", "id": cid, "metadata": {}, "execution_count": None, "outputs": [], "source": f"x = {i}"}
        for i, cid in enumerate(cell_ids)
    ]
    return json.dumps(
        {
            "cells": cells,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


@dataclass
class Lab:
    url: str
    repo: Path
    log: Path


@pytest.fixture
def lab(tmp_path: Path, jupymem_home: Path) -> Iterator[Lab]:
    if not (LABEXTENSION / "package.json").exists():
        pytest.fail(
            f"The sidebar is not built ({LABEXTENSION} is missing): `pip install -e .` builds it, "
            "or run `jlpm install && jlpm build:prod` in labextension/."
        )
    root = tmp_path / "root"
    repo = make_repo(root / "proj")
    (repo / "nb").mkdir()
    (repo / "nb" / "analysis.ipynb").write_text(notebook_json([f"cell-{i}" for i in range(40)] + ["cell-42"]))

    other = make_repo(root / "other")
    (other / "x.ipynb").write_text(notebook_json(["only"]))
    (root / "plain").mkdir()
    (root / "plain" / "notes.md").write_text("# not in git\n")

    # The labextension directory must be named after the package for JupyterLab to serve it.
    labext = tmp_path / "labextensions"
    labext.mkdir()
    (labext / "jupymem").symlink_to(LABEXTENSION, target_is_directory=True)
    config = tmp_path / "jupyter-config"
    config.mkdir()
    (config / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": {"jpserver_extensions": {"jupymem": True}}})
    )
    port = free_port()
    env = {
        **os.environ,
        "JUPYMEM_HOME": str(jupymem_home),
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_DATA_DIR": str(tmp_path / "jupyter-data"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "jupyter-runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "lab-settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "lab-workspaces"),
    }
    log = tmp_path / "lab.log"
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--ServerApp.token={TOKEN}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.extra_labextensions_path={labext}",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/jupymem/api/status?path=proj&token={TOKEN}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"jupyter lab did not start:\n{log.read_text()[-4000:]}")
            time.sleep(0.25)
        yield Lab(url=url, repo=repo, log=log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def seed(repo: Path) -> dict[str, str]:
    proj = jupymem.init(repo)
    supported = proj.remember(
        "Revenue is reported in EUR, never USD",
        kind="constraint",
        provenance=Provenance(recorder="person", notebook="nb/analysis.ipynb", cell_id="cell-42", execution_count=3),
    )
    unconfirmed = proj.remember(
        "Fiscal years start in April",
        kind="fact",
        provenance=Provenance(recorder="assistant", notebook="nb/analysis.ipynb"),
    )
    proj.remember("Plots use the colorblind-safe palette", kind="preference")
    proj.remember("Parse order dates with dayfirst=True", kind="procedure")
    proj.stage_failure(
        Evidence(
            handle="ev-0badcafe",
            session="kernel-1",
            ename="KeyError",
            evalue="'customer_id'",
            diagnosis=("KeyError: 'customer_id'",),
            excerpt="df['customer_id']",
            created_at="2025-01-01T00:00:00.000000Z",
            cell_id="cell-7",
            execution_count=12,
            notebook="nb/analysis.ipynb",
        )
    )
    assert unconfirmed.standing == "unconfirmed"
    return {"supported": supported.id, "unconfirmed": unconfirmed.id, "handle": "ev-0badcafe"}


def test_sidebar_browse_search_confirm_and_keep(lab: Lab) -> None:
    from playwright.sync_api import expect, sync_playwright

    ids = seed(lab.repo)
    proj = jupymem.project(lab.repo)
    assert proj is not None
    ARTIFACTS.mkdir(exist_ok=True)

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{lab.url}/lab/tree/proj/nb/analysis.ipynb?token={TOKEN}")

            # The sidebar tab is there; open it.
            tab = page.locator('.jp-SideBar .lm-TabBar-tab[data-id="jupymem-sidebar"]')
            expect(tab).to_be_visible(timeout=60_000)
            tab.click()
            sidebar = page.locator("#jupymem-sidebar")
            expect(sidebar).to_be_visible()

            # It follows the notebook in focus: header with the repository and counts.
            expect(sidebar.locator(".jp-jupymem-repo")).to_have_text("proj", timeout=30_000)
            expect(sidebar.locator(".jp-jupymem-chip", has_text="constraint")).to_contain_text("1")
            expect(sidebar.locator(".jp-jupymem-meter")).to_be_visible()
            unconfirmed_row = sidebar.locator(f'[data-memory-id="{ids["unconfirmed"]}"]')
            expect(unconfirmed_row).to_contain_text("(unconfirmed)")
            group_titles = sidebar.locator(".jp-jupymem-group-title").all_inner_texts()
            assert [t.split()[0].lower() for t in group_titles] == ["constraint", "preference", "procedure", "fact"]

            # Search as you type.
            box = sidebar.locator(".jp-jupymem-search-input")
            box.fill("revenue reported in EUR")
            results = sidebar.locator(".jp-jupymem-results")
            expect(results.locator(".jp-jupymem-row").first).to_contain_text("Revenue is reported in EUR", timeout=10_000)
            assert proj.search("revenue reported in EUR").hits[0].memory.id == ids["supported"]
            sidebar.screenshot(path=str(ARTIFACTS / "sidebar-search.png"))
            box.fill("kubernetes ingress annotations")
            expect(sidebar.locator(".jp-jupymem-abstained")).to_contain_text("Abstained", timeout=10_000)

            # Open a memory: full statement, provenance with a link to the cell, history.
            box.fill("revenue reported in EUR")
            results.locator(f'[data-memory-id="{ids["supported"]}"]').click()
            detail = sidebar.locator(".jp-jupymem-detail")
            expect(detail.locator(".jp-jupymem-full-statement")).to_have_text("Revenue is reported in EUR, never USD")
            expect(detail.locator(".jp-jupymem-link")).to_contain_text("nb/analysis.ipynb (go to cell)")
            expect(detail.locator(".jp-jupymem-history")).to_contain_text("recorded")
            sidebar.screenshot(path=str(ARTIFACTS / "sidebar-detail.png"))
            detail.locator(".jp-jupymem-link").click()
            active = page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell.jp-mod-active")
            expect(active).to_contain_text("x = 40", timeout=15_000)  # cell-42 is the 41st cell
            detail.locator(".jp-jupymem-back").click()

            # Confirm the unconfirmed one.
            box.fill("")
            sidebar.locator(f'[data-memory-id="{ids["unconfirmed"]}"]').click()
            sidebar.get_by_role("button", name="Confirm").click()
            expect(sidebar.locator(".jp-jupymem-notice")).to_have_text("Confirmed.", timeout=10_000)
            assert proj.get(ids["unconfirmed"]).standing == "supported"
            assert [h.action for h in proj.history(ids["unconfirmed"])][-1] == "confirmed"
            expect(sidebar.get_by_role("button", name="Confirm")).to_have_count(0)
            sidebar.locator(".jp-jupymem-back").click()
            expect(sidebar.locator(f'[data-memory-id="{ids["unconfirmed"]}"]')).not_to_contain_text("(unconfirmed)")

            # Keep a staged failure as a lesson.
            sidebar.get_by_role("tab", name="Failures (1)").click()
            card = sidebar.locator('.jp-jupymem-evidence[data-handle="ev-0badcafe"]')
            expect(card).to_contain_text("KeyError: 'customer_id'")
            card.get_by_role("button", name="Keep as lesson…").click()
            card.locator("textarea").fill("The sales table calls the key cust_id, not customer_id")
            card.locator("select").select_option("correction")
            sidebar.screenshot(path=str(ARTIFACTS / "sidebar-failures.png"))
            card.get_by_role("button", name="Keep", exact=True).click()
            expect(sidebar.locator(".jp-jupymem-notice")).to_contain_text("Kept as a lesson", timeout=10_000)
            kept = [m for m in proj.list(kind="correction") if m.evidence]
            assert [m.statement for m in kept] == ["The sales table calls the key cust_id, not customer_id"]
            assert kept[0].evidence[0].handle == ids["handle"]
            assert kept[0].provenance.cell_id == "cell-7"
            expect(card).to_contain_text("Kept as a lesson")
            expect(sidebar.get_by_role("tab", name="Failures", exact=True)).to_be_visible()

            # Record a new memory from the panel (keyboard: Ctrl+Enter submits).
            sidebar.get_by_role("tab", name="Memories").click()
            sidebar.get_by_role("button", name="+ Record").click()
            form = sidebar.locator(".jp-jupymem-form")
            form.locator("textarea").fill("Churn is measured over 90 days")
            form.locator("select").select_option("decision")
            form.locator("textarea").press("Control+Enter")
            expect(sidebar.locator(".jp-jupymem-notice")).to_have_text("Recorded.", timeout=10_000)
            recorded = [m for m in proj.list(kind="decision") if m.statement == "Churn is measured over 90 days"]
            assert len(recorded) == 1 and recorded[0].standing == "supported"
            assert recorded[0].provenance.notebook == "nb/analysis.ipynb"

            # Memory changed elsewhere (a kernel, the CLI) shows up on its own.
            sidebar.get_by_role("tab", name="Memories").click()
            outside = proj.remember("Dashboards refresh at 06:00 UTC", kind="decision")
            expect(sidebar.locator(f'[data-memory-id="{outside.id}"]')).to_be_visible(timeout=15_000)

            # Block preview: exactly the core's block.
            sidebar.get_by_role("tab", name="Block").click()
            preview = sidebar.locator(".jp-jupymem-block-text")
            expect(preview).to_contain_text("<project_memory")
            assert preview.inner_text().strip() == proj.block().text.strip()

            sidebar.get_by_role("tab", name="Memories").click()
            expect(sidebar.locator(f'[data-memory-id="{outside.id}"]')).to_be_visible()
            page.screenshot(path=str(ARTIFACTS / "lab.png"))
            sidebar.screenshot(path=str(ARTIFACTS / "sidebar.png"))

            # XSRF: the browser's login cookie reads, but a write without the XSRF
            # header (what a forged cross-site form would send) is refused.
            xsrf_probe = """async (withHeader) => {
                const xsrf = (document.cookie.match(/_xsrf=([^;]+)/) || [])[1] || '';
                const read = await fetch('/jupymem/api/status?path=proj');
                const headers = withHeader ? {'X-XSRFToken': decodeURIComponent(xsrf)} : {};
                const write = await fetch('/jupymem/api/memories', {method: 'POST', headers,
                    body: JSON.stringify({path: 'proj', statement: 'Written with the login cookie'})});
                return [read.status, write.status];
            }"""
            assert page.evaluate(xsrf_probe, False) == [200, 403]
            assert not [m for m in proj.list() if m.statement == "Written with the login cookie"]
            assert page.evaluate(xsrf_probe, True) == [200, 201]

            # A repository without memory: said plainly, nothing created until Init.
            other = lab.repo.parent / "other"
            # ?reset: a fresh workspace, so the notebook restored from before cannot take focus back.
            page.goto(f"{lab.url}/lab/tree/other/x.ipynb?reset&token={TOKEN}")
            tab.wait_for(timeout=60_000)
            if not sidebar.is_visible():
                tab.click()
            expect(sidebar).to_contain_text("other has no memory yet", timeout=30_000)
            assert jupymem.project(other) is None
            sidebar.get_by_role("button", name="Init memory").click()
            expect(sidebar.locator(".jp-jupymem-repo")).to_have_text("other", timeout=10_000)
            assert jupymem.project(other) is not None

            # Outside git.
            page.goto(f"{lab.url}/lab/tree/plain/notes.md?reset&token={TOKEN}")
            tab.wait_for(timeout=60_000)
            if not sidebar.is_visible():
                tab.click()
            expect(sidebar).to_contain_text("not inside a git repository", timeout=30_000)
            assert not [e for e in errors if "jupymem" in e.lower()], errors
        finally:
            browser.close()


def test_sidebar_sharing_switch_author_private_and_two_replacements(lab: Lab) -> None:
    from playwright.sync_api import expect, sync_playwright

    from jupymem import sharelog
    from team import git
    from test_share_log import Writer, memory_payload

    git(lab.repo, "config", "user.name", "Ana")
    git(lab.repo, "config", "user.email", "ana@example.com")
    proj = jupymem.init(lab.repo)
    old = proj.remember("Join sales to customers on customer_id", kind="decision")
    ARTIFACTS.mkdir(exist_ok=True)

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{lab.url}/lab/tree/proj/nb/analysis.ipynb?reset&token={TOKEN}")
            tab = page.locator('.jp-SideBar .lm-TabBar-tab[data-id="jupymem-sidebar"]')
            expect(tab).to_be_visible(timeout=60_000)
            tab.click()
            sidebar = page.locator("#jupymem-sidebar")
            expect(sidebar.locator(".jp-jupymem-repo")).to_have_text("proj", timeout=30_000)

            # The recorder's name in the list; sharing is off until someone turns it on.
            expect(sidebar.locator(f'[data-memory-id="{old.id}"] .jp-jupymem-author')).to_have_text("Ana")
            switch = sidebar.get_by_role("switch", name="Share through git")
            expect(switch).not_to_be_checked()
            expect(sidebar.locator(".jp-jupymem-sharing-label")).to_contain_text("stays on this machine")
            switch.click()
            expect(sidebar.locator(".jp-jupymem-notice")).to_contain_text("Sharing is on", timeout=15_000)
            expect(switch).to_be_checked()
            expect(sidebar.locator(".jp-jupymem-sharing-label")).to_contain_text("writing as Ana <ana@example.com>")
            (log,) = sharelog.log_dir(lab.repo).glob("*.jsonl")
            assert "customer_id" in log.read_text()

            # Recording privately from the panel keeps it out of the files.
            sidebar.get_by_role("button", name="+ Record").click()
            form = sidebar.locator(".jp-jupymem-form")
            form.locator("textarea").fill("My private doubt about the churn label")
            form.get_by_label("Private (this machine only)").check()
            form.get_by_role("button", name="Record").click()
            expect(sidebar.locator(".jp-jupymem-notice")).to_have_text("Recorded.", timeout=10_000)
            (private,) = [m for m in proj.list() if m.private]
            assert private.statement == "My private doubt about the churn label"
            assert "churn label" not in log.read_text()
            expect(sidebar.locator(f'[data-memory-id="{private.id}"] .jp-jupymem-private')).to_be_visible()

            # Two people replace the same memory differently (Ben's line arrives with a pull).
            ours = proj.supersede(old.id, "Join on customer_id after trimming it")
            theirs = memory_payload("Join on customer_id after lower-casing it", kind="decision")
            Writer(lab.repo).append("supersede", {"old": old.id, "memory": theirs}, "2030-01-01T00:00:00.000000Z")
            row = sidebar.locator(f'[data-memory-id="{ours.id}"]')
            expect(row).to_contain_text("1 of 2 replacements", timeout=15_000)
            row.click()
            detail = sidebar.locator(".jp-jupymem-detail")
            expect(detail.locator(".jp-jupymem-disputed")).to_contain_text("one of 2 active replacements")
            expect(detail.locator(".jp-jupymem-recorder")).to_have_text("person (Ana <ana@example.com>)")
            sidebar.screenshot(path=str(ARTIFACTS / "sidebar-sharing.png"))
            detail.get_by_role("button", name=f"Open {theirs['id'][:10]}").click()
            expect(detail.locator(".jp-jupymem-full-statement")).to_have_text(theirs["statement"])
            detail.get_by_role("button", name="Retire…").click()
            detail.get_by_role("button", name="Retire", exact=True).click()
            expect(sidebar.locator(".jp-jupymem-notice")).to_have_text("Retired.", timeout=10_000)
            assert proj.get(ours.id).replacements == ()
            sidebar.locator(".jp-jupymem-back").click()

            # A hand-edited line: named in the panel, and its words are nowhere.
            text = log.read_text()
            log.write_text(text.replace("after trimming it", "after ignoring it"))
            problems = sidebar.locator(".jp-jupymem-share-problems")
            expect(problems).to_contain_text(f"{log.name} line", timeout=15_000)
            expect(problems).to_contain_text("fails its hash")
            expect(sidebar.locator(".jp-jupymem-root")).not_to_contain_text("after ignoring it")
            sidebar.screenshot(path=str(ARTIFACTS / "sidebar-sharing-problem.png"))
            assert not [e for e in errors if "jupymem" in e.lower()], errors
        finally:
            browser.close()
