"""``%memory browse``'s ipywidgets browser, driven through its widgets and a real shell."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from IPython.core.interactiveshell import InteractiveShell

import jupymem
from jupymem.faces import render
from jupymem.faces.browse import browser
from jupymem.models import Provenance

RAW_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}|\d{2}:\d{2}:\d{2}\.\d")


def run(ip: InteractiveShell, code: str) -> None:
    result = ip.run_cell(code, store_history=True)
    assert result.success, result.error_in_exec or result.error_before_exec


def test_browser_searches_lists_shows_and_curates(repo: Path, settings: jupymem.Settings) -> None:
    proj = jupymem.init(repo, settings=settings)
    eur = proj.remember("Revenue is reported in EUR, never USD", kind="constraint")
    april = proj.remember(
        "Fiscal years start in April", kind="fact", provenance=Provenance(recorder="assistant", notebook="a.ipynb")
    )
    proj.remember("Plots use <b>bold</b> titles", kind="preference")

    box = browser(proj)
    ui = box.jupymem
    # Kinds wear the shared palette's classes; the block's size in one unit, with a count.
    assert "jp-jupymem-kind-constraint'" in ui["header"].value and ">constraint</span> 1" in ui["header"].value
    assert f"block {proj.block().bytes} of 4,000 bytes (3 memories)" in ui["header"].value
    assert ui["note"].value == "3 memories"
    labels = [label for label, _ in ui["list"].options]
    assert labels[0].startswith("constraint: Revenue")  # block order
    assert any(label.startswith("fact (unconfirmed): Fiscal") for label in labels)

    ui["search"].value = "revenue reported in EUR"
    assert [v for _, v in ui["list"].options][0] == eur.id
    assert ui["note"].value == "1 match"
    ui["search"].value = "kubernetes ingress annotations"
    assert ui["list"].options == () and "Abstained" in ui["note"].value
    # An abstention with near memories still lists them, said to be unsure.
    result = proj.search("what is the revenue of the Lisbon office?")
    assert result.abstained and [h.memory.id for h in result.closest] == [eur.id]
    ui["search"].value = "what is the revenue of the Lisbon office?"
    assert "No memory answers this confidently" in ui["note"].value
    assert [v for _, v in ui["list"].options] == [eur.id]

    ui["search"].value = ""
    ui["list"].value = april.id
    detail = ui["detail"].value
    assert "Fiscal years start in April" in detail and "a.ipynb" in detail
    # Times for people, as the notebook output writes them: no raw ISO, no microseconds.
    assert not RAW_ISO.search(detail), detail
    assert re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC – now", detail), detail
    assert ui["confirm"].disabled is False
    ui["confirm"].click()
    assert proj.get(april.id).standing == "supported"
    assert ui["confirm"].disabled is True
    assert "confirmed" in ui["detail"].value

    ui["reason"].value = "the fiscal year changed"
    ui["retire"].click()
    retired = proj.get(april.id)
    assert retired.status == "retired" and retired.retire_reason == "the fiscal year changed"
    assert april.id not in [v for _, v in ui["list"].options]
    assert ui["reason"].value == ""
    ui["past"].value = True
    assert april.id in [v for _, v in ui["list"].options]

    ui["kind"].value = "preference"
    (only,) = ui["list"].options
    ui["list"].value = only[1]
    assert "&lt;b&gt;bold&lt;/b&gt;" in ui["detail"].value and "<b>bold</b>" not in ui["detail"].value


def test_an_empty_block_reads_empty(repo: Path, settings: jupymem.Settings) -> None:
    proj = jupymem.init(repo, settings=settings)
    ui = browser(proj).jupymem
    assert "block empty" in ui["header"].value and "bytes" not in ui["header"].value
    assert "no active memories" in ui["header"].value and ui["note"].value == "0 memories"


def test_the_list_fits_its_output_area(repo: Path, settings: jupymem.Settings) -> None:
    """A widget's margin on top of width 100% pushes its right border out of view
    (the browser test in tests/test_sidebar_e2e.py measures it in a real page)."""
    proj = jupymem.init(repo, settings=settings)
    box = browser(proj)
    parts = [box, *box.children, box.jupymem["list"]]
    assert not [p for p in parts if p.layout.width == "100%"]
    assert box.jupymem["list"].layout.align_self == "stretch"


def test_browse_catches_up_with_changes_made_elsewhere(shell: InteractiveShell, repo: Path) -> None:
    run(shell, "%%remember --kind decision\nJoin sales to customers on customer_id.")
    hooks = len(shell.events.callbacks["post_run_cell"])
    run(shell, "%memory browse")  # through the magic: it follows the shell's cells
    assert len(shell.events.callbacks["post_run_cell"]) == hooks + 1

    proj = jupymem.project(repo)
    assert proj is not None
    box = browser(proj, shell=shell)
    ui = box.jupymem
    assert ">decision</span> 1" in ui["header"].value and "constraint" not in ui["header"].value

    # Another cell records: the browser has caught up when that cell ends.
    run(shell, "%%remember --kind constraint\nNever write to data/raw; it is read-only.")
    assert ">constraint</span> 1" in ui["header"].value
    assert any(label.startswith("constraint: Never write") for label, _ in ui["list"].options)

    # Another process records (the CLI): the next use of the browser redraws it.
    env = {**os.environ, "JUPYMEM_HOME": os.environ["JUPYMEM_HOME"]}
    cli = subprocess.run(
        [sys.executable, "-m", "jupymem.faces.cli", "remember", "--kind", "fact", "Fiscal years start in April."],
        cwd=repo, env=env, capture_output=True, text=True, timeout=120,
    )
    assert cli.returncode == 0, cli.stderr
    assert "fact" not in ui["header"].value
    ui["kind"].value = "decision"
    assert ">fact</span> 1" in ui["header"].value

    # And "Refresh" redraws on request.
    proj.retire(proj.list(kind="fact")[0].id, "wrong calendar")
    ui["refresh"].click()
    assert "fact" not in ui["header"].value

    # Closed, it unhooks itself after the next cell.
    box.close()
    run(shell, "x = 1")
    assert len(shell.events.callbacks["post_run_cell"]) == hooks + 1  # the magic's browser is still open


def test_browse_shows_how_sure_each_hit_is_and_who_recorded_it(repo: Path, settings: jupymem.Settings) -> None:
    """Issue 33: the widget browser showed neither confidence nor author."""
    subprocess.run(["git", "-C", str(repo), "config", "user.name", "Ana López"], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "user.email", "ana@example.com"], check=True)
    proj = jupymem.init(repo, settings=settings)
    eur = proj.remember("Revenue is reported in EUR, never USD", kind="constraint")
    ui = browser(proj).jupymem
    (label, _), = ui["list"].options
    assert label.endswith("— Ana López"), label  # the name, not the address
    ui["search"].value = "revenue reported in EUR"
    hit = proj.search("revenue reported in EUR").hits[0]
    word, percent = render.confidence_word(hit.confidence), round(hit.confidence * 100)
    (label, value), = ui["list"].options
    assert value == eur.id and label.startswith(f"{word} {percent}% · constraint: Revenue"), label
    ui["list"].value = eur.id
    detail = ui["detail"].value
    assert f"{word} {percent}%" in detail and "person (Ana López &lt;ana@example.com&gt;)" in detail, detail
