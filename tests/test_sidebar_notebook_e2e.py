"""The sidebar in Jupyter Notebook 7: a real ``jupyter notebook`` on loopback, driven by
headless Chromium, in the light, dark and high-contrast themes.

Notebook 7 has no ``ILabShell``: the plugin once failed there on every page ("No
provider for ILabShell"). Now it is a side panel through Notebook's own shell, opened
by its shortcut or the command palette, and every flow of the panel is walked as in
JupyterLab (``walk_every_state``), with the contrast of every text measured at each
state. ``.ci/run`` runs this file against the oldest JupyterLab too, with the Notebook
release that goes with it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import jupymem

from browser_checks import AA
from lab_fixture import BROWSER_MARKS, TOKEN, Browser, Lab
from test_sidebar_e2e import walk_every_state

pytest_plugins = ["lab_fixture"]  # its fixtures: notebook (one per theme) and page

pytestmark = BROWSER_MARKS


@pytest.fixture
def lab(notebook: Lab) -> Lab:
    """The ``page`` fixture's server: Notebook 7 here."""
    return notebook


def test_every_state_in_notebook_7(lab: Lab, page: Any) -> None:
    walk_every_state(lab, page)


@pytest.mark.parametrize("notebook", ["light"], indirect=True)  # behaviour, not looks: one theme
def test_notebook_opens_the_panel_from_its_palette_and_follows_the_file_browser(lab: Lab, page: Any) -> None:
    from playwright.sync_api import expect

    proj = jupymem.init(lab.repo)
    eur = proj.remember("Revenue is reported in EUR, never USD", kind="constraint")
    b = Browser(page, lab)
    # The tree page: the panel follows the folder the file browser shows.
    page.goto(f"{lab.url}/tree/proj?token={TOKEN}")
    page.locator(".jp-DirListing-item", has_text="nb").first.wait_for(timeout=60_000)
    sidebar = page.locator("#jupymem-sidebar")
    page.locator("body").press("Control+Shift+C")
    palette = page.locator(".jp-ModalCommandPalette, #modal-command-palette, #command-palette").first
    palette.locator("input").fill("Open project memory")
    expect(palette.locator(".lm-CommandPalette-item", has_text="Open project memory")).to_be_visible()
    page.keyboard.press("Enter")
    expect(sidebar).to_be_visible(timeout=15_000)
    expect(sidebar.locator(".jp-jupymem-repo")).to_have_text("proj", timeout=30_000)
    expect(sidebar.locator(f'[data-memory-id="{eur.id}"]')).to_be_visible()
    b.snap("notebook-tree")
    # A notebook's page: the shortcut opens it, and it follows the notebook.
    sidebar = b.open("other/x.ipynb")
    expect(sidebar).to_contain_text("other has no memory yet", timeout=30_000)
    assert not b.activation_errors(), b.activation_errors()
    assert not [m for m in b.console if "No provider for" in m], b.console
    assert not b.low, f"text below {AA}:1: {json.dumps(b.low, indent=1)}"
