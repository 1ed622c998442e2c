"""Credentials without a vendor prefix are refused at every entrance and redacted in failed cells.

``secret_corpus_generic.CORPUS`` was written before the generic layer of the rules, as
its target: a case counts as caught only when every entrance refuses it and every way a
failed cell can hold it keeps none of its secret:

* ``capture.check_statement``: what ``remember``, ``%%remember``, the CLI and REST run;
* ``validate.check_memory``: what an import and a pulled shared line run (a record
  event's memory, with its id derived from its words as the writers derive it);
* ``capture.evidence_from_exception`` in each of ``test_failed_cell_secrets.WAYS``
  (the cell's source as written and as a repr, the message, its repr, a note, the
  cause, a long cell whose kept tail starts inside the text).

The share that must be caught is a threshold, not all: the corpus is wider than the
rules (``README.md`` says what the layer does not catch), and the misses are listed.
"""

from __future__ import annotations

from collections.abc import Callable

from jupymem.errors import SecretRefused
from jupymem.intake import capture
from jupymem.storage import validate
from secret_corpus_generic import CORPUS
from test_failed_cell_secrets import WAYS, _parts, _texts

Check = Callable[[str], object]


def _remember(text: str) -> object:
    return capture.check_statement(text)


def _imported(text: str) -> object:
    statement = text.strip()
    memory = {"id": capture.memory_id(statement), "kind": "decision", "statement": statement, "standing": "supported"}
    return validate.check_memory(memory)


ENTRANCES: dict[str, Check] = {"remember": _remember, "import-and-pull": _imported}


def misses(text: str, secrets: tuple[str, ...]) -> list[str]:
    """How ``text`` gets through: the entrances that take it, the failed-cell ways that keep a secret."""
    out = []
    for name, check in ENTRANCES.items():
        try:
            check(text)
        except SecretRefused:
            continue
        out.append(name)
    parts = [p for secret in secrets for p in _parts(secret)]
    for way, build in WAYS.items():
        source, exc = build(text)
        ev = capture.evidence_from_exception(exc, session="s", source=source)
        assert ev is not None
        if any(part in t for t in _texts(ev) for part in parts):
            out.append(f"failed-cell:{way}")
    return out


def caught_share(corpus: dict[str, tuple[str, tuple[str, ...]]]) -> tuple[float, dict[str, list[str]]]:
    missed = {name: m for name, (text, secrets) in corpus.items() if (m := misses(text, secrets))}
    return 1 - len(missed) / len(corpus), missed


def test_the_corpus_is_wide():
    assert len(CORPUS) >= 80


def test_nine_in_ten_are_refused_everywhere_and_redacted_in_failed_cells():
    share, missed = caught_share(CORPUS)
    assert share >= 0.90, (f"{share:.1%}", missed)


def test_the_measure_sees_what_gets_through():
    # a text with nothing secret gets through every entrance, and failed cells keep it
    found = misses("Join orders on customer_id_2024_v2 after the export.", ("customer_id_2024_v2",))
    assert found[:2] == ["remember", "import-and-pull"]
    assert {"failed-cell:message", "failed-cell:source", "failed-cell:note"} <= set(found)
