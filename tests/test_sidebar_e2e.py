"""The sidebar end to end: a real ``jupyter lab`` on loopback, driven by headless
Chromium through Playwright, checked against the database after each step.

Needs Debian's chromium at /usr/bin/chromium (``.ci/run`` installs it) and the
built labextension (``pip install -e .`` builds it into jupymem/labextension).
Leaves a screenshot of the sidebar in test-artifacts/sidebar.png.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def test_a_cell_fixed_in_jupyterlab_becomes_a_suggested_lesson(lab: Lab) -> None:
    """Fail, edit, rerun in a real notebook (JupyterLab sends the cell ids); the Failures
    tab shows the pair side by side and keeps its suggested lesson."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect, sync_playwright

    proj = jupymem.init(lab.repo)
    cells = [("load", "%load_ext jupymem"), ("data", 'sales = {"customer_id": [1, 2]}'), ("key", 'sales["custid"]')]
    nb = json.loads(notebook_json([cid for cid, _ in cells]))
    for cell, (_, source) in zip(nb["cells"], cells):
        cell["source"] = source
    (lab.repo / "nb" / "pairing.ipynb").write_text(json.dumps(nb))
    ARTIFACTS.mkdir(exist_ok=True)

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{lab.url}/lab/tree/proj/nb/pairing.ipynb?reset&token={TOKEN}")
            notebook = page.locator(".jp-NotebookPanel:visible .jp-Notebook")
            expect(notebook.locator(".jp-Cell")).to_have_count(3, timeout=60_000)
            # A fresh workspace may ask which kernel to start: the notebook's own.
            select = page.locator(".jp-Dialog").get_by_role("button", name="Select", exact=True)
            try:
                select.wait_for(timeout=15_000)
                select.click()
            except PlaywrightTimeout:
                pass
            expect(page.locator(".jp-NotebookPanel:visible .jp-Notebook-ExecutionIndicator[data-status='idle']")).to_have_count(
                1, timeout=60_000
            )

            def run(i: int, count: int, replace_with: str | None = None) -> Any:
                """Run cell ``i`` (after typing ``replace_with`` into it) from the page, as a person would."""
                cell = notebook.locator(".jp-Cell").nth(i)
                cell.locator(".cm-content").click()
                expect(cell).to_have_class(re.compile(r"\bjp-mod-active\b"))
                expect(cell.locator(".cm-editor")).to_have_class(re.compile(r"\bcm-focused\b"))
                if replace_with is not None:
                    page.keyboard.press("Control+a")
                    page.keyboard.insert_text(replace_with)
                page.keyboard.press("Control+Enter")
                expect(cell.locator(".jp-InputPrompt")).to_have_text(f"[{count}]:", timeout=60_000)
                return cell

            run(0, 1)
            run(1, 2)
            expect(run(2, 3).locator(".jp-OutputArea")).to_contain_text("KeyError", timeout=30_000)
            # Edit the failed cell in place and run it again.
            expect(run(2, 4, 'sales["customer_id"]').locator(".jp-OutputArea")).to_contain_text("[1, 2]", timeout=30_000)

            (ev,) = proj.staged_evidence()
            assert ev.cell_id == "key" and ev.fix is not None
            assert (ev.fix.cell_id, ev.fix.paired_by) == ("key", "cell id")
            assert ev.suggestion == "`sales[\"custid\"]` raised KeyError 'custid'; the fix used `sales[\"customer_id\"]`."

            tab = page.locator('.jp-SideBar .lm-TabBar-tab[data-id="jupymem-sidebar"]')
            tab.click()
            sidebar = page.locator("#jupymem-sidebar")
            expect(sidebar.locator(".jp-jupymem-repo")).to_have_text("proj", timeout=30_000)
            sidebar.get_by_role("tab", name="Failures (1)").click()
            card = sidebar.locator(f'.jp-jupymem-evidence[data-handle="{ev.handle}"]')
            # The pair side by side, the edit, the suggested lesson.
            expect(card.locator(".jp-jupymem-pair-failed")).to_contain_text(f"Failed [{ev.execution_count}]")
            expect(card.locator(".jp-jupymem-pair-failed pre")).to_have_text('sales["custid"]')
            expect(card.locator(".jp-jupymem-pair-fixed")).to_contain_text(f"Fixed in [{ev.fix.execution_count}]")
            expect(card.locator(".jp-jupymem-pair-fixed pre")).to_have_text('sales["customer_id"]')
            expect(card.locator(".jp-jupymem-diff-del")).to_have_text('-sales["custid"]')
            expect(card.locator(".jp-jupymem-diff-add")).to_have_text('+sales["customer_id"]')
            expect(card.locator(".jp-jupymem-suggestion")).to_contain_text(ev.suggestion)
            failed_box = card.locator(".jp-jupymem-pair-failed").bounding_box()
            fixed_box = card.locator(".jp-jupymem-pair-fixed").bounding_box()
            assert failed_box and fixed_box and fixed_box["x"] > failed_box["x"]  # side by side
            assert abs(fixed_box["y"] - failed_box["y"]) < 2
            # Keep as lesson: prefilled with the suggestion, kind failure.
            card.get_by_role("button", name="Keep as lesson…").click()
            expect(card.locator("textarea")).to_have_value(ev.suggestion)
            expect(card.locator("select")).to_have_value("failure")
            sidebar.screenshot(path=str(ARTIFACTS / "sidebar-pair.png"))
            card.get_by_role("button", name="Keep", exact=True).click()
            expect(sidebar.locator(".jp-jupymem-notice")).to_contain_text("Kept as a lesson", timeout=10_000)
            (lesson,) = proj.list()
            assert (lesson.kind, lesson.statement, lesson.standing) == ("failure", ev.suggestion, "supported")
            assert lesson.evidence[0].fix == ev.fix

            # The lesson's detail shows the fix of the failure it cites.
            sidebar.get_by_role("tab", name="Memories").click()
            sidebar.locator(f'[data-memory-id="{lesson.id}"]').click()
            detail = sidebar.locator(".jp-jupymem-detail")
            expect(detail.locator(".jp-jupymem-diff-add")).to_have_text('+sales["customer_id"]')
            expect(detail.locator(".jp-jupymem-pair-fixed")).to_contain_text(f"Fixed in [{ev.fix.execution_count}]")
            sidebar.screenshot(path=str(ARTIFACTS / "sidebar-pair-detail.png"))
            assert not [e for e in errors if "jupymem" in e.lower()], errors
        finally:
            browser.close()
