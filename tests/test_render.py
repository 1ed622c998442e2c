"""render: the text, HTML and JSON that people and scripts see."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import jupymem
from jupymem.faces import render
from jupymem.intake import capture
from jupymem.models import Provenance, to_json


@pytest.fixture
def proj(repo: Path):
    return jupymem.init(repo)


def test_html_escapes_everything_and_marks_unconfirmed(proj) -> None:
    m = proj.remember('<script>alert("x")</script> & <b>bold</b>', kind="fact",
                      provenance=Provenance(recorder="assistant", notebook="a<b>.ipynb", cell_id='c"1'))
    for html in (render.memory_html(m), render.memories_html([m]), render.search_html(proj.search("alert bold")),
                 render.history_html(proj.history(m.id)), render.block_html(proj.block())):
        assert "<script>" not in html and "<b>bold" not in html and 'c"1' not in html
    assert "&lt;script&gt;" in render.memory_html(m) and "&amp;lt;script&amp;gt;" in render.block_html(proj.block())
    assert "(unconfirmed)" in render.memory_html(m) and "(unconfirmed)" in render.memories_html([m])
    assert "(unconfirmed)" in render.memory_line(m)


def test_lists_clip_long_statements_and_show_has_them_whole(proj) -> None:
    long = "Join orders to customers on customer_id; " * 20 + "the last words matter"
    m = proj.remember(long, kind="decision")
    line = render.memories_text([m])
    assert "the last words matter" not in line and "…" in line
    assert "the last words matter" in render.memory_text(m)
    html = render.memories_html([m])
    assert f"(show {m.id})" in html and "the last words matter" in html  # in the tooltip


def test_lists_are_grouped_in_block_order(proj) -> None:
    proj.remember("a note", kind="note")
    proj.remember("a correction", kind="correction")
    proj.remember("a decision", kind="decision")
    text = render.memories_text(proj.list())
    assert text.index("correction (1)") < text.index("decision (1)") < text.index("note (1)")
    assert render.memories_text([]) == "No memories."


def test_terminal_text_drops_control_characters(proj) -> None:
    try:
        raise ValueError("bad value \x1b[31mred\x1b[0m")
    except ValueError as exc:
        ev = capture.evidence_from_exception(exc, session="s", cell_id="c1", execution_count=3)
    text = render.evidence_text([ev])
    assert "\x1b" not in text and ev.handle in text and "ValueError" in text


def test_memory_detail_has_provenance_validity_and_evidence(proj) -> None:
    try:
        {}["customer_id"]
    except KeyError as exc:
        ev = capture.evidence_from_exception(exc, session="k1", cell_id="cell-7", execution_count=12)
    proj.stage_failure(ev)
    m = proj.remember("customer_id is cust_id in the raw data", kind="correction", evidence=[ev.handle],
                      provenance=Provenance(recorder="person", notebook="eda.ipynb", cell_id="cell-9",
                                            execution_count=13, session="k1"))
    new = proj.supersede(m.id, "customer_id is cust_id in the raw and staged data")
    old = proj.get(m.id)
    text = render.memory_text(old)
    for needle in ("correction", "superseded", "eda.ipynb", "cell cell-9", "execution [13]", "session k1",
                   f"superseded by  {new.id}", ev.handle, "KeyError: 'customer_id'", "-> 20"):
        assert needle in text, needle
    assert "recorded by person" in render.memory_html(old) and new.id in render.memory_html(old)


def test_search_json_shapes(proj) -> None:
    proj.remember("Use customer_id as the join key", kind="decision")
    ok = to_json(proj.search("customer_id join key"))
    assert ok["status"] == "ok" and ok["reason"] is None and ok["full"]["kind"] == "decision"
    assert set(ok["hits"][0]) >= {"memory", "score", "legs"}
    assert set(ok["hits"][0]["memory"]) >= {"id", "kind", "statement", "standing", "topic", "status"}
    no = to_json(proj.search("chocolate cake recipe"))
    assert no["status"] == "abstained" and no["hits"] == [] and no["full"] is None and no["reason"]
    json.dumps(ok), json.dumps(no)
    assert render.search_text(proj.search("chocolate cake recipe")).startswith("No match (abstained)")


def test_block_text_is_the_block_unaltered_and_reports_render(proj) -> None:
    proj.remember("a < b", kind="fact")
    block = proj.block()
    assert render.block_text(block) is block.text
    assert render.verify_text(proj.verify()).startswith("verify: ok")
    assert "dry run" in render.gc_text(proj.gc(dry_run=True))
    status = jupymem.status(proj.root)
    assert "1 active" in render.status_text(status) and "<td" in render.status_html(status)
    out = render.Output("plain", "<b>rich</b>")
    assert out._repr_html_() == "<b>rich</b>" and str(out) == "plain"


def test_search_output_shows_each_hits_confidence_and_the_legs_that_ran(proj) -> None:
    proj.remember("Join orders to customers on customer_id, never on email.", kind="decision")
    result = proj.search("which key joins orders and customers?")
    assert result.status == "ok" and result.legs == ("lexical", "fuzzy")  # no encoder in these tests
    hit = result.hits[0]
    word = render.confidence_word(hit.confidence)
    assert word in ("strong", "likely")
    text = render.search_text(result)
    assert f"{word} {hit.confidence:.2f}" in text and "words only" in text
    html = render.search_html(result)
    assert ">confidence<" in html and f"confidence {hit.confidence:.2f}" in html and word in html
    data = to_json(result)  # what --json and REST carry
    assert data["legs"] == ["lexical", "fuzzy"]
    assert data["hits"][0]["confidence"] == hit.confidence


def test_the_closest_memories_of_an_abstention_are_never_called_likely(proj) -> None:
    """A verdict that abstains shows the nearest memories under "No memory answers this
    confidently": each of them is "weak" there, whatever its score (issue 32: a row read
    "likely" under that heading), in text, HTML, the widget browser's words and REST's."""
    import dataclasses

    from jupymem.models import Hit, SearchResult

    m = proj.remember("Join orders to customers on customer_id, never on email.", kind="decision")
    near = Hit(memory=m, score=3.2, legs=("lexical",), confidence=0.84)
    result = SearchResult(query="who joins the forecasting tables?", status="abstained", closest=(near,),
                          reason="nothing matches closely enough", legs=("lexical", "fuzzy"))
    assert render.confidence_word(0.84) == "likely"
    assert render.confidence_word(0.84, answered=False) == "weak"
    assert render.hit_words(result) == [(near, "weak")]
    text = render.search_text(result)
    assert text.startswith(render.NOT_CONFIDENT) and re.search(r"weak +0.84", text) and "likely" not in text
    html = render.search_html(result)
    assert "likely" not in html and " weak</span>" in html
    answered = dataclasses.replace(result, status="ok", hits=(near,), closest=())
    assert render.hit_words(answered) == [(near, "likely")] and re.search(r"likely +0.84", render.search_text(answered))
