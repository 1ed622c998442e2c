"""``%memory browse``'s ipywidgets browser, driven through its widgets."""

from __future__ import annotations

from pathlib import Path

import jupymem
from jupymem.faces.browse import browser
from jupymem.models import Provenance


def test_browser_searches_lists_shows_and_curates(repo: Path, settings: jupymem.Settings) -> None:
    proj = jupymem.init(repo, settings=settings)
    eur = proj.remember("Revenue is reported in EUR, never USD", kind="constraint")
    april = proj.remember(
        "Fiscal years start in April", kind="fact", provenance=Provenance(recorder="assistant", notebook="a.ipynb")
    )
    proj.remember("Plots use <b>bold</b> titles", kind="preference")

    box = browser(proj)
    ui = box.jupymem
    assert "constraint 1" in ui["header"].value and str(proj.block().bytes) in ui["header"].value
    labels = [label for label, _ in ui["list"].options]
    assert labels[0].startswith("constraint: Revenue")  # block order
    assert any(label.startswith("fact (unconfirmed): Fiscal") for label in labels)

    ui["search"].value = "revenue reported in EUR"
    assert [v for _, v in ui["list"].options][0] == eur.id
    ui["search"].value = "kubernetes ingress annotations"
    assert ui["list"].options == () and "Abstained" in ui["note"].value

    ui["search"].value = ""
    ui["list"].value = april.id
    assert "Fiscal years start in April" in ui["detail"].value and "a.ipynb" in ui["detail"].value
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
    ui["past"].value = True
    assert april.id in [v for _, v in ui["list"].options]

    ui["kind"].value = "preference"
    (only,) = ui["list"].options
    ui["list"].value = only[1]
    assert "&lt;b&gt;bold&lt;/b&gt;" in ui["detail"].value and "<b>bold</b>" not in ui["detail"].value
