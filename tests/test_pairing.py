"""Failure -> fix pairing (jupymem/intake/pairing.py): similarity, chains, diffs and suggested lessons.

Real exceptions from real code, a real Pairing; the kernel and the faces have their
own tests (test_pairing_kernel.py, test_pairing_faces.py).
"""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell

from jupymem.intake.capture import evidence_from_exception, raising_line
from jupymem.intake.pairing import (
    MAX_DIFF_BYTES,
    MAX_DIFF_LINES,
    THRESHOLD,
    Pairing,
    compact_diff,
    error_phrase,
    make_fix,
    similarity,
    suggest,
)
from jupymem.models import Evidence

SECRET = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"


def failure(source: str, cell_id: str | None = None, count: int | None = None, namespace: dict | None = None) -> Evidence:
    """Run ``source`` for real and return its staged evidence (it must fail)."""
    ns = {} if namespace is None else namespace
    try:
        exec(compile(source, "<cell>", "exec"), ns)
    except Exception as exc:  # noqa: BLE001 - the point is to catch what the cell raised
        ev = evidence_from_exception(exc, session="s1", source=source, cell_id=cell_id, execution_count=count)
        assert ev is not None
        return ev
    raise AssertionError(f"{source!r} did not fail")


# -- similarity ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "failed, fixed",
    [
        ('sales["custid"]', 'sales["customer_id"]'),
        ("grid = np.arange(10).reshape(3, 3)", "grid = np.arange(9).reshape(3, 3)"),
        ('med = statistics.median(xs)', 'import statistics\nmed = statistics.median(xs)'),  # a line added
        ('order = sorted(sales["amount"])', 'order = sorted(a for a in sales["amount"] if a is not None)'),
        ("from collections import OrderDict", "from collections import OrderedDict"),
        ("x = load('a.csv')\ny = x.sum()\nz = y / 0", "x = load('a.csv')\ny = x.sum()"),  # a line removed
        ("df.head()", "df.head()"),
    ],
)
def test_edits_of_a_cell_score_above_the_threshold(failed: str, fixed: str) -> None:
    assert similarity(failed, fixed) >= THRESHOLD


@pytest.mark.parametrize(
    "failed, other",
    [
        ("prod = np.ones((3, 2)) @ np.ones((3, 2))", "np.ones((3, 2)).shape"),  # looking at part of it
        ("w = np.arange(3) + np.arange(4)", "np.arange(4).shape"),
        ('names = json.loads(Path("c.json").read_text())', 'Path("c.json").write_text(json.dumps(customers))'),
        ('total = sum(sales["amt"])', "list(sales)"),
        ("x.sum()", "for row in rows:\n    print(row, x.sum(), len(rows), sorted(row.items()))\nrows = []"),
        ("1/0", "import numpy as np"),
        ("", "x = 1"),
    ],
)
def test_unrelated_cells_score_below_the_threshold(failed: str, other: str) -> None:
    assert similarity(failed, other) < THRESHOLD


# -- pairing by cell id -----------------------------------------------------------------


def test_a_cell_id_pairs_exactly_and_other_cells_never_pair() -> None:
    pairing = Pairing()
    assert pairing.waiting is False
    ev = failure('sales = {"customer_id": [1]}\nsales["custid"]', cell_id="c1", count=3)
    assert pairing.failed(ev, 'sales = {"customer_id": [1]}\nsales["custid"]') is None
    assert pairing.waiting is True
    # Another cell with the very same text is not this cell's fix: the id decides.
    assert pairing.succeeded('sales = {"customer_id": [1]}\nsales["customer_id"]', "c2", 4) == []
    (fixed,) = pairing.succeeded('sales = {"customer_id": [1]}\nsales["customer_id"]', "c1", 5)
    assert fixed.handle == ev.handle
    assert fixed.fix is not None
    assert (fixed.fix.execution_count, fixed.fix.cell_id, fixed.fix.paired_by) == (5, "c1", "cell id")
    # One line of context, no header: a diff that reads in a sidebar.
    assert fixed.fix.diff == ' sales = {"customer_id": [1]}\n-sales["custid"]\n+sales["customer_id"]'
    assert fixed.suggestion == "`sales[\"custid\"]` raised KeyError 'custid'; the fix used `sales[\"customer_id\"]`."
    assert fixed.suggested_by == "pair"
    assert pairing.waiting is False
    # Paired once: running the cell again fixes nothing more.
    assert pairing.succeeded('sales = {"customer_id": [1]}\nsales["customer_id"]', "c1", 6) == []


def test_a_cell_that_fails_again_keeps_the_chain() -> None:
    pairing = Pairing()
    first = failure('d = {"customer_id": 1}\nd["custid"]', cell_id="c1", count=1)
    second = failure('d = {"customer_id": 1}\nd["cust_id"]', cell_id="c1", count=2)
    assert pairing.failed(first, 'd = {"customer_id": 1}\nd["custid"]') is None
    earlier = pairing.failed(second, 'd = {"customer_id": 1}\nd["cust_id"]')
    assert earlier is not None and earlier.handle == first.handle and earlier.next_failure == second.handle
    newest, oldest = pairing.succeeded('d = {"customer_id": 1}\nd["customer_id"]', "c1", 3)
    assert (newest.handle, oldest.handle) == (second.handle, first.handle)
    assert oldest.next_failure == second.handle and newest.next_failure is None
    # Each failure of the chain is diffed against its own source and names its own error.
    assert "-d[\"custid\"]" in oldest.fix.diff and "-d[\"cust_id\"]" in newest.fix.diff
    assert "'custid'" in oldest.suggestion and "'cust_id'" in newest.suggestion
    assert all("customer_id" in e.suggestion for e in (newest, oldest))


# -- pairing without cell ids ------------------------------------------------------------


def test_without_ids_the_most_recent_close_edit_pairs_and_unrelated_cells_do_not() -> None:
    pairing = Pairing()
    a = failure("import np", count=1)
    b = failure("xs = [3, 1, 2]\nxs.sortt()", count=2)
    pairing.failed(a, "import np")
    pairing.failed(b, "xs = [3, 1, 2]\nxs.sortt()")
    for unrelated in ("x = 1", "print('hello')", "len([1, 2, 3])", "xs"):
        assert pairing.succeeded(unrelated, None, None) == []
    (fixed_b,) = pairing.succeeded("xs = [3, 1, 2]\nxs.sort()", None, 7)
    assert fixed_b.handle == b.handle and fixed_b.fix.paired_by.startswith("similarity ")
    assert float(fixed_b.fix.paired_by.split()[1]) >= THRESHOLD
    (fixed_a,) = pairing.succeeded("import numpy as np", None, 8)
    assert fixed_a.handle == a.handle
    assert pairing.waiting is False


def test_without_ids_a_failure_stops_waiting_after_the_horizon() -> None:
    pairing = Pairing(horizon=3)
    ev = failure("xs = [3, 1]\nxs.sortt()")
    pairing.failed(ev, "xs = [3, 1]\nxs.sortt()")
    for i in range(3):
        pairing.succeeded(f"y{i} = {i}", None, None)
    assert pairing.waiting is True  # not looked at since: it goes on the next comparison
    assert pairing.succeeded("xs = [3, 1]\nxs.sort()", None, None) == []
    assert pairing.waiting is False


def test_unchanged_source_names_the_cell_that_ran_in_between() -> None:
    pairing = Pairing()
    ns: dict = {}
    ev = failure("scaled = normalize(3.0)", count=4, namespace=ns)
    pairing.failed(ev, "scaled = normalize(3.0)")
    pairing.succeeded("def normalize(v):\n    return v / 10", None, 5)
    (fixed,) = pairing.succeeded("scaled = normalize(3.0)", None, 6)
    assert fixed.fix.diff == "" and fixed.fix.after == "def normalize(v):"
    assert fixed.suggestion == (
        "`scaled = normalize(3.0)` raised NameError: name 'normalize' is not defined; "
        "it ran unchanged in [6] after `def normalize(v):` ran."
    )


# -- diffs, fixes and suggestions -----------------------------------------------------------


def test_compact_diff_is_headerless_capped_and_redacted() -> None:
    assert compact_diff("a = 1\nb = 2", "a = 1\nb = 3") == " a = 1\n-b = 2\n+b = 3"
    assert compact_diff("same", "same") == ""
    two_hunks = compact_diff("a\nb\nc\nd\ne\nf\ng", "A\nb\nc\nd\ne\nf\nG")
    assert two_hunks.count("@@") == 4 and "-a" in two_hunks and "+G" in two_hunks
    big = compact_diff("\n".join(f"x{i} = {i}" for i in range(200)), "\n".join(f"x{i} = {i + 1}" for i in range(200)))
    assert len(big.split("\n")) == MAX_DIFF_LINES + 1 and big.endswith("…")
    wide = compact_diff("x = 1", "x = '" + "y" * 5000 + "'")
    assert len(wide.encode("utf-8")) <= MAX_DIFF_BYTES + 4
    secret = compact_diff("token = None\ncall(token)", f"token = '{SECRET}'\ncall(token)")
    assert SECRET not in secret and "token" in secret


def test_a_fix_keeps_a_redacted_clipped_source() -> None:
    fix = make_fix("x = get()", f"x = get(key='{SECRET}')\n" + "y = 1\n" * 2000, execution_count=9, cell_id="c9")
    assert SECRET not in fix.source and SECRET not in fix.diff
    assert len(fix.source.encode("utf-8")) <= 2048
    assert (fix.execution_count, fix.cell_id) == (9, "c9")


@pytest.mark.parametrize(
    "failed, fixed, expected",
    [
        (
            "statistics.median([1, 2])",
            "import statistics\nstatistics.median([1, 2])",
            "`statistics.median([1, 2])` raised NameError: name 'statistics' is not defined; "
            "the fix added `import statistics`.",
        ),
        (
            "xs = [1, 2]\nxs.append(3)\nxs[5]",
            "xs = [1, 2]\nxs.append(3)",
            "`xs[5]` raised IndexError: list index out of range; the fix removed that line.",
        ),
        (
            "names = []\nfor i in range(1, 3):\n    names.append(['a', 'b'][i])",
            "names = []\nfor i in range(0, 2):\n    names.append(['a', 'b'][i])",
            "`names.append(['a', 'b'][i])` raised IndexError: list index out of range; "
            "the fix changed `for i in range(1, 3):` to `for i in range(0, 2):`.",
        ),
    ],
)
def test_suggestions_name_the_error_and_the_change(failed: str, fixed: str, expected: str) -> None:
    shell = InteractiveShell.instance()
    try:
        result = shell.run_cell(failed, silent=True)
        exc = result.error_in_exec
        ev = evidence_from_exception(exc, session="s", source=failed)
        line = raising_line(exc, shell.user_ns)
    finally:
        InteractiveShell.clear_instance()
    assert suggest(ev, failed, fixed, make_fix(failed, fixed), line) == expected


def test_a_suggestion_never_carries_a_secret() -> None:
    failed = f"connect('{SECRET}', retries='x')"
    ev = failure(f"def connect(token, retries):\n    raise ValueError('retries must be a number')\n{failed}")
    text = suggest(ev, failed, f"connect('{SECRET}', retries=3)", None, None)
    assert SECRET not in text and "ValueError" in text and "retries=3" in text


def test_error_phrase_reads_like_python() -> None:
    assert error_phrase(failure("{}['custid']")) == "KeyError 'custid'"
    assert error_phrase(failure("undefined_name")) == "NameError: name 'undefined_name' is not defined"
    assert error_phrase(failure("assert False")) == "AssertionError"


def test_raising_line_points_into_the_cell() -> None:
    shell = InteractiveShell.instance()
    try:
        result = shell.run_cell("def f():\n    return 1 / 0\nx = 1\ny = f()", silent=True)
        assert raising_line(result.error_in_exec, shell.user_ns) == 4  # the call, not the function body
        result = shell.run_cell("if x\n    pass", silent=True)
        assert raising_line(result.error_before_exec, shell.user_ns) == 1
    finally:
        InteractiveShell.clear_instance()
    assert raising_line(ZeroDivisionError(), {}) is None  # never raised: no traceback


def test_a_cell_failing_over_and_over_keeps_a_bounded_chain() -> None:
    from jupymem.intake.pairing import MAX_CHAIN

    pairing = Pairing()
    handles = []
    for i in range(3 * MAX_CHAIN):
        ev = failure(f"xs = [{i}]\nxs.sortt()", cell_id="c1", count=i)
        pairing.failed(ev, f"xs = [{i}]\nxs.sortt()")
        handles.append(ev.handle)
    fixed = pairing.succeeded("xs = [0]\nxs.sort()", "c1", 99)
    assert [e.handle for e in fixed] == handles[::-1][:MAX_CHAIN]  # the newest failures of the chain
    assert all(e.fix is not None and e.fix.execution_count == 99 for e in fixed)
