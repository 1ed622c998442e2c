"""What the sidebar's browser tests share: a real ``jupyter lab`` (or ``jupyter notebook``,
Notebook 7) on loopback (``running_lab``) serving this checkout's labextension, the memory
they seed, and ``Browser``, which screenshots each state and measures the contrast of its text.

Test modules wrap ``running_lab`` in their own ``lab`` fixture, each over the themes
it checks, and keep the ``page`` fixture beside it (it must close before the lab).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

import jupymem
from jupymem.models import Evidence, Provenance

from browser_checks import CHROMIUM, chromium_page, contrast
from conftest import make_repo

REPO_ROOT = Path(__file__).resolve().parent.parent
LABEXTENSION = REPO_ROOT / "jupymem" / "labextension"
ARTIFACTS = REPO_ROOT / "test-artifacts"
TOKEN = "jupymem-e2e-token"
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark", "high-contrast": "JupyterLab Dark High Contrast"}
# Where JupyterLab keeps its themes: a release without the high-contrast one skips it.
HIGH_CONTRAST_THEME = "@jupyterlab/theme-dark-high-contrast-extension"
# Read at import: conftest's autouse fixture clears JUPYMEM_* for each test.
EXPECTED_LAB = os.environ.get("JUPYMEM_E2E_JUPYTERLAB")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def notebook_json(sources: list[str], cell_ids: list[str] | None = None) -> str:
    ids = cell_ids or [f"c{i}" for i in range(len(sources))]
    cells = [
        {"cell_type": "code", "id": cid, "metadata": {}, "execution_count": None, "outputs": [], "source": src}
        for cid, src in zip(ids, sources)
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
    theme: str
    app: str = "lab"  # "lab": JupyterLab; "notebook": Jupyter Notebook 7


def has_theme(theme: str) -> bool:
    """Whether this JupyterLab ships ``theme`` (the high-contrast one came in 4.x)."""
    if theme != "high-contrast":
        return True
    from jupyterlab.commands import get_app_dir

    return (Path(get_app_dir()) / "themes" / HIGH_CONTRAST_THEME).is_dir()


@contextlib.contextmanager
def running_lab(theme: str, tmp_path: Path, jupymem_home: Path, app: str = "lab",
                encoder: str | None = "none") -> Iterator[Lab]:
    """``jupyter lab`` (``app="notebook"``: ``jupyter notebook``, Notebook 7) on loopback in
    ``theme`` (a key of ``THEMES``), serving this checkout's labextension and server
    extension, with the ``proj`` repository. ``encoder``: the server's JUPYMEM_ENCODER
    (None: unset, the default two tiers)."""
    if not (LABEXTENSION / "package.json").exists():
        pytest.fail(
            f"The sidebar is not built ({LABEXTENSION} is missing): `pip install -e .` builds it, "
            "or run `jlpm install && jlpm build:prod` in labextension/."
        )
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing and JUPYMEM_E2E_JUPYTERLAB asks for this test: `apt-get install chromium`.")
    if EXPECTED_LAB:
        assert version("jupyterlab").startswith(EXPECTED_LAB + "."), (
            f"JUPYMEM_E2E_JUPYTERLAB={EXPECTED_LAB}, but this environment has JupyterLab {version('jupyterlab')}"
        )
    root = tmp_path / "root"
    repo = make_repo(root / "proj")
    (repo / "nb").mkdir()
    cells = [f"x = {i}" for i in range(40)] + ["x = 40"]
    (repo / "nb" / "analysis.ipynb").write_text(notebook_json(cells, [f"cell-{i}" for i in range(40)] + ["cell-42"]))
    (repo / "nb" / "browse.ipynb").write_text(
        notebook_json(["%load_ext jupymem", "%memory list", "%memory browse"])
    )

    other = make_repo(root / "other")
    (other / "x.ipynb").write_text(notebook_json(["x = 1"], ["only"]))
    (root / "plain").mkdir()
    (root / "plain" / "notes.md").write_text("# not in git\n")

    # The labextension directory must be named after the package for JupyterLab to serve it.
    labext = tmp_path / "labextensions"
    labext.mkdir()
    (labext / "jupymem").symlink_to(LABEXTENSION, target_is_directory=True)
    config = tmp_path / "jupyter-config"
    config.mkdir()
    (config / "jupyter_server_config.json").write_text(
        # Jupyter AI's MCP server binds port 3001 unless told otherwise: a port of its own
        # (0: the system picks), so that two labs on one machine never fight over it.
        json.dumps({"ServerApp": {"jpserver_extensions": {"jupymem": True}}, "MCPExtensionApp": {"mcp_port": 0}})
    )
    themes = tmp_path / "lab-settings" / "@jupyterlab" / "apputils-extension"
    themes.mkdir(parents=True)
    (themes / "themes.jupyterlab-settings").write_text(json.dumps({"theme": THEMES[theme]}))
    # No "get notified about Jupyter news?" toast over the screenshots.
    (themes / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if k != "JUPYMEM_ENCODER"},
        **({"JUPYMEM_ENCODER": encoder} if encoder is not None else {}),
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
        "jupyterlab" if app == "lab" else "notebook",
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--ServerApp.token={TOKEN}",
        f"--ServerApp.root_dir={root}",
    ]
    if app == "lab":
        cmd += [
            f"--LabApp.extra_labextensions_path={labext}",
            "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ]
    else:  # Notebook 7's application is a LabServerApp too
        # jupyter notebook serves /lab/extensions/ through JupyterLab's app too (both are LabServerApps)
        cmd += [f"--LabServerApp.extra_labextensions_path={labext}"]
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
                pytest.fail(f"jupyter {app} did not start:\n{log.read_text()[-4000:]}")
            time.sleep(0.25)
        yield Lab(url=url, repo=repo, log=log, theme=theme, app=app)
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
    palette = proj.remember("Plots use the colorblind-safe palette", kind="preference")
    dates = proj.remember("Parse order dates with dayfirst=True", kind="procedure")
    # As a kernel stages it: the notebook's absolute path, the error lines at the end of the excerpt.
    proj.stage_failure(
        Evidence(
            handle="ev-0badcafe",
            session="kernel-1",
            ename="KeyError",
            evalue="'customer_id'",
            diagnosis=("KeyError: 'customer_id'",),
            excerpt="df['customer_id']\n\nKeyError: 'customer_id'",
            created_at="2025-01-01T00:00:00.000000Z",
            cell_id="cell-7",
            execution_count=12,
            notebook=str(repo / "nb" / "analysis.ipynb"),
        )
    )
    assert unconfirmed.standing == "unconfirmed"
    return {
        "supported": supported.id,
        "unconfirmed": unconfirmed.id,
        "palette": palette.id,
        "dates": dates.id,
        "handle": "ev-0badcafe",
    }


class Browser:
    """One page of the lab, with the screenshots and contrast checks of each state."""

    def __init__(self, page: Any, lab: Lab) -> None:
        self.page = page
        self.lab = lab
        self.low: dict[str, list[dict[str, Any]]] = {}
        self.console: list[str] = []
        self.errors: list[str] = []
        page.on("console", lambda msg: self.console.append(msg.text))
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))

    def open(self, path: str, reset: bool = False) -> Any:
        """Opens ``path`` in the lab (``reset``: a fresh workspace) and the sidebar beside it.
        In Notebook 7: the page for ``path`` (a notebook, a folder or a file), and the
        sidebar through its shortcut (Notebook's side panels start hidden)."""
        sidebar = self.page.locator("#jupymem-sidebar")
        if self.lab.app == "notebook":
            kind = "notebooks" if path.endswith(".ipynb") else "edit" if "." in path.rsplit("/", 1)[-1] else "tree"
            self.page.goto(f"{self.lab.url}/{kind}/{path}?token={TOKEN}")
            self.page.locator("#main-panel .lm-Widget").first.wait_for(timeout=60_000)
            self.page.wait_for_function("() => !!document.getElementById('jupymem-sidebar')", timeout=60_000)
            if not sidebar.is_visible():
                self.shortcut()
            sidebar.wait_for(state="visible", timeout=30_000)
            return sidebar
        query = f"?reset&token={TOKEN}" if reset else f"?token={TOKEN}"
        self.page.goto(f"{self.lab.url}/lab/tree/{path}{query}")
        tab = self.page.locator('.jp-SideBar .lm-TabBar-tab[data-id="jupymem-sidebar"]')
        tab.wait_for(timeout=60_000)
        if not sidebar.is_visible():
            tab.click()
        return sidebar

    def press(self, name: str, within: str = "#jupymem-sidebar", attempts: int = 3) -> None:
        """Click the button called ``name`` in ``within`` and make sure the click reached such
        a button. On a loaded machine a click can land while the page is still laying out (a
        notebook opening beside the panel) and hit whatever was under the pointer instead;
        the action the test checks next then never starts. A click that reached no such
        button is made again; one that did is never repeated, so an action that fails after
        its click still fails. (The check is by name, not by element: React may replace the
        button's node between finding it and clicking it.)"""
        button = self.page.locator(within).get_by_role("button", name=name, exact=True)
        for _ in range(attempts):
            self.page.evaluate(
                """([within, name]) => {
                  window.__jmPressed = false;
                  const seen = e => {
                    const b = e.target instanceof Element ? e.target.closest('button') : null;
                    if (b && b.closest(within) && b.textContent.trim() === name) {
                      window.__jmPressed = true;
                      window.removeEventListener('click', seen, true);
                    }
                  };
                  window.addEventListener('click', seen, true);
                }""",
                [within, name],
            )
            button.click()
            try:
                self.page.wait_for_function("() => window.__jmPressed", timeout=2_000)
                return
            except Exception:  # Playwright's TimeoutError: the click went elsewhere
                continue
        raise AssertionError(f"{attempts} clicks never reached the button {name!r}")

    def shortcut(self) -> None:
        """The panel's shortcut (schema/sidebar.json: Accel Shift Y), pressed on the page."""
        self.page.locator("body").press("Control+Shift+Y")

    def activation_errors(self) -> list[str]:
        """What the page logged about a plugin of ours that did not start."""
        return [m for m in self.console + self.errors if "jupymem" in m.lower() and "activate" in m.lower()]

    def calibrate(self) -> None:
        """The measurement itself, on text of known contrast: #999 on white is 2.85:1."""
        self.page.evaluate(
            "() => { const d = document.createElement('div'); d.id = 'jm-calibrate';"
            " d.style.cssText = 'background:#fff;color:#999'; d.textContent = 'grey on white';"
            " document.body.appendChild(d); }"
        )
        measured = contrast(self.page, "#jm-calibrate")
        self.page.evaluate("() => document.getElementById('jm-calibrate').remove()")
        assert measured["checked"] == 1 and measured["low"][0]["ratio"] == pytest.approx(2.85, abs=0.01), measured

    def snap(self, state: str, selector: str = "#jupymem-sidebar") -> None:
        """A screenshot of this state, and every piece of its text measured."""
        ARTIFACTS.mkdir(exist_ok=True)
        app = "" if self.lab.app == "lab" else f"-{self.lab.app}"
        self.page.locator(selector).screenshot(path=str(ARTIFACTS / f"sidebar-{state}{app}-{self.lab.theme}.png"))
        measured = contrast(self.page, selector)
        assert measured["checked"] > 0, f"no text measured in {state}"
        if measured["low"]:
            self.low[state] = measured["low"]


# -- the fixtures both browser test modules use (``from lab_fixture import lab, page``) -----------


# What every browser test module marks itself with: ``pytestmark = BROWSER_MARKS``.
BROWSER_MARKS = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists() and not EXPECTED_LAB,
        reason=f"{CHROMIUM} is missing: `apt-get install chromium` (CI's .ci/run does) to run the browser test",
    ),
]


@pytest.fixture(params=["light", "dark", "high-contrast"])
def lab(request: pytest.FixtureRequest, tmp_path: Path, jupymem_home: Path) -> Iterator[Lab]:
    if not has_theme(request.param):
        pytest.skip("this JupyterLab has no high-contrast theme")
    with running_lab(request.param, tmp_path, jupymem_home) as lab:
        yield lab


@pytest.fixture(params=["light", "dark", "high-contrast"])
def notebook(request: pytest.FixtureRequest, tmp_path: Path, jupymem_home: Path) -> Iterator[Lab]:
    """``jupyter notebook`` (Notebook 7), one per theme: a module that tests Notebook wraps it as its ``lab``."""
    if not has_theme(request.param):
        pytest.skip("this JupyterLab has no high-contrast theme")
    pytest.importorskip("notebook", reason="Notebook 7 is not installed: pip install 'notebook>=7,<8'")
    with running_lab(request.param, tmp_path, jupymem_home, app="notebook") as lab:
        yield lab


@pytest.fixture
def page(lab: Lab) -> Iterator[Any]:
    """A page of headless Chromium, closed before the lab stops."""
    with chromium_page() as page:
        yield page
