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

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from jupymem.errors import SecretRefused
from jupymem.intake import capture
from jupymem.intake.secrets_scan import find_secrets
from jupymem.storage import validate
from secret_corpus_classes import CLASSES
from secret_corpus_generic import CORPUS
from secret_corpus_holdout import HOLDOUT
from secret_corpus_holdout2 import HOLDOUT2, LOOKALIKES2
from secret_lookalikes import LOOKALIKES
from secret_shapes import CLEAN
from test_failed_cell_secrets import WAYS, _parts, _raised, _texts

TESTS = Path(__file__).parent
SHARED = Path("/work/shared/data")  # the team's shared gold suites, where this machine has them

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


def test_the_first_holdout_is_caught_whole_since_the_rules_learned_its_misses():
    # 25 of 44 (56.8%) when written against the frozen rules of e0ce5af, untuned. Its 19 misses
    # were then read as classes (secret_corpus_classes) and the rules improved on them: 44 of 44
    # since. That is no longer a holdout's figure (the rules have seen it), only a floor against
    # regressions; secret_corpus_holdout2 measures what the improved rules were not shown.
    share, missed = caught_share(HOLDOUT)
    assert len(HOLDOUT) >= 40
    assert missed == {}, (f"{share:.1%}", sorted(missed))


def test_the_second_holdout_keeps_its_measured_share():
    # 34 of 83 (41.0%): secret_corpus_holdout2 was written after the rules froze in acf6d47,
    # committed (b1e8882) before it was measured, and the rules are not tuned on it. This is a
    # floor against regressions, not a target; what it misses is in the README (positional
    # arguments of library calls and of commands no table lists, passwords piped by echo,
    # printf or expect, key files of other armour, directives of network gear and mail clients).
    share, missed = caught_share(HOLDOUT2)
    assert len(HOLDOUT2) >= 60
    assert len(HOLDOUT2) - len(missed) >= 34, (f"{share:.1%}", sorted(missed))


# The second holdout's look-alikes flagged when it was measured: a false alarm, recorded as
# measured rather than tuned away (the placeholder list knows YOUR_API_KEY, not YOUR_API_TOKEN).
# Measured when the second holdout was written: 1 of its 52 look-alikes flagged
# ('NEPTUNE_API_TOKEN="YOUR_API_TOKEN"', a placeholder the list lacked). Mended after that
# measurement (placeholders now take an api/access/auth... word before the credential word);
# the catch rate above was measured before and is unchanged by it.
_FLAGGED_LOOKALIKES2: set[str] = set()


def test_the_second_holdouts_look_alikes_flag_no_more_than_measured():
    assert len(LOOKALIKES2) >= 40
    assert {t for t in LOOKALIKES2 if find_secrets(t)} <= _FLAGGED_LOOKALIKES2


def test_the_classes_of_the_holdouts_misses_are_caught_in_every_case():
    # secret_corpus_classes: the first holdout's 19 misses widened to their classes (SQL, clients
    # the table did not list, configuration commands, protocol lines, PowerShell, blank-separated
    # names, constructors, headers, cookies), written with the rules that read them: all of it.
    share, missed = caught_share(CLASSES)
    assert len(CLASSES) >= 70
    assert missed == {}, (f"{share:.1%}", missed)


def test_the_measure_sees_what_gets_through():
    # a text with nothing secret gets through every entrance, and failed cells keep it
    found = misses("Join orders on customer_id_2024_v2 after the export.", ("customer_id_2024_v2",))
    assert found[:2] == ["remember", "import-and-pull"]
    assert {"failed-cell:message", "failed-cell:source", "failed-cell:note"} <= set(found)


# -- what must stay clean ---------------------------------------------------------------------


def _gold_statements() -> list[str]:
    """Every text of every gold suite (memories, queries) and every statement file of tests/data."""
    paths = sorted((TESTS / "gold").glob("*.jsonl")) + sorted((TESTS.parent / "benchmarks" / "suites").rglob("*.jsonl"))
    paths += sorted(SHARED.glob("*.jsonl")) if SHARED.is_dir() else []
    out = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            out += [v for v in json.loads(line).values() if isinstance(v, str) and len(v) > 20]
    for path in sorted((TESTS / "data").glob("*.t[xs][tv]")):
        lines = path.read_text(encoding="utf-8").splitlines()
        out += [line.split("\t", 1)[-1] for line in lines if line.strip() and not line.startswith("# ")]
    return out


def test_no_ordinary_statement_of_any_gold_suite_is_flagged():
    statements = _gold_statements()
    assert len(statements) >= 3000
    assert [t[:120] for t in statements if find_secrets(t)] == []


_CLEAN_TEXTS = LOOKALIKES + CLEAN + [t for t in LOOKALIKES2 if t not in _FLAGGED_LOOKALIKES2]


@pytest.mark.parametrize("text", _CLEAN_TEXTS, ids=[t[:40] for t in _CLEAN_TEXTS])
def test_look_alikes_pass_every_entrance_and_stay_whole_in_failed_cells(text):
    assert find_secrets(text) == []
    for check in ENTRANCES.values():
        check(text)
    ev = capture.evidence_from_exception(_raised(ValueError(text)), session="s", source=f"check({text!r})")
    assert ev is not None and "[REDACTED" not in ev.excerpt + ev.evalue
