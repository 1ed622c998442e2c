"""A notebook session of real failure -> fix pairs, for measuring pairing (SPEC 3).

One session, run top to bottom in one kernel with no cell ids (as nbclient and
terminal IPython run it): the errors data scientists meet (a KeyError on a
column, shapes that do not line up, dtypes, NaN, merge keys, off-by-one
windows, import names, file paths ...), each fixed the way people fix them
(edit the line, add an import, rerun after fixing something elsewhere, fail
again first), with unrelated successes in between, some of them close to the
failed cell (looking at the data after an error), and failures nobody fixes.

Each cell says what it must do (``ok`` or ``fail``). A failure names its pair
(``pair``) and a piece of the fix its suggested lesson must name (``change``);
the success that fixes it names the same pair. Unrelated cells name none.
Plain Python and numpy only (pandas is not a test dependency).

Used by tests/test_pairing_kernel.py (a real kernel through nbclient) and by
benchmarks/bench_pairing.py (the threshold sweep).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cell:
    source: str
    expect: str  # "ok" or "fail"
    pair: str | None = None  # the failure -> fix pair this cell belongs to
    change: str | None = None  # on a failure: what its suggested lesson must quote from the fix


def ok(source: str, pair: str | None = None) -> Cell:
    return Cell(source, "ok", pair)


def fail(source: str, pair: str | None = None, change: str | None = None) -> Cell:
    return Cell(source, "fail", pair, change)


SETUP = '''\
import csv
import json
from pathlib import Path

import numpy as np

Path("data").mkdir(exist_ok=True)
Path("data/sales.csv").write_text("customer_id,amount,region\\n1,10.5,north\\n2,,south\\n3,7.25,north\\n")
sales = {"customer_id": [1, 2, 3], "amount": [10.5, None, 7.25], "region": ["north", "south", "north"]}
customers = [{"customer_id": 1, "name": "Ada"}, {"customer_id": 2, "name": "Grace"}, {"customer_id": 3, "name": "Alan"}]'''

SESSION: list[Cell] = [
    ok(SETUP),
    # A KeyError on a column, fixed, then a TypeError on the missing value: one chain.
    fail('total = sum(sales["amt"])', "total", "amount"),
    ok("list(sales)"),
    fail('total = sum(sales["amount"])', "total", "is not None"),
    ok('total = sum(a for a in sales["amount"] if a is not None)', "total"),
    ok("total"),
    # A module used before it is imported: the import goes into the cell.
    fail('med = statistics.median(sales["customer_id"])', "median", "import statistics"),
    ok('import statistics\nmed = statistics.median(sales["customer_id"])', "median"),
    # The wrong name in an import.
    fail("from collections import OrderDict", "ordered", "OrderedDict"),
    ok("from collections import OrderedDict", "ordered"),
    # A module by its alias.
    fail("import np", "alias", "import numpy as np"),
    ok("import numpy as np", "alias"),
    # A file path relative to the wrong folder; looking around first.
    fail('rows = list(csv.DictReader(open("sales.csv")))', "path", "data/sales.csv"),
    ok('sorted(p.name for p in Path("data").iterdir())'),
    ok('rows = list(csv.DictReader(open("data/sales.csv")))', "path"),
    # A file that does not exist yet: written by another cell, then the same cell again.
    fail('names = json.loads(Path("data/customers.json").read_text())', "written", "write_text"),
    ok('Path("data/customers.json").write_text(json.dumps(customers))'),
    ok('names = json.loads(Path("data/customers.json").read_text())', "written"),
    # Shapes.
    fail("prod = np.ones((3, 2)) @ np.ones((3, 2))", "matmul", "(2, 3)"),
    ok("np.ones((3, 2)).shape"),
    ok("prod = np.ones((3, 2)) @ np.ones((2, 3))", "matmul"),
    fail("w = np.arange(3) + np.arange(4)", "broadcast", "np.arange(4) + np.arange(4)"),
    ok("np.arange(4).shape"),
    ok("w = np.arange(4) + np.arange(4)", "broadcast"),
    fail("grid = np.arange(10).reshape(3, 3)", "reshape", "arange(9)"),
    ok("grid = np.arange(9).reshape(3, 3)", "reshape"),
    # dtypes.
    fail('amounts = [int(x) for x in ["10", "7.5", "3"]]', "parse", "float(x)"),
    ok('amounts = [float(x) for x in ["10", "7.5", "3"]]', "parse"),
    fail('label = "customer " + sales["customer_id"][0]', "concat", "str("),
    ok('label = "customer " + str(sales["customer_id"][0])', "concat"),
    ok("x = 1"),
    # NaN.
    fail('amt = np.array([10.5, np.nan, 7.25])\nassert not np.isnan(amt.mean()), "the mean is NaN"', "nanmean", "nanmean"),
    ok('amt = np.array([10.5, np.nan, 7.25])\nassert not np.isnan(np.nanmean(amt)), "the mean is NaN"', "nanmean"),
    fail("first = int(np.array([np.nan, 2.0])[0])", "nan-int", "nan_to_num"),
    ok("first = int(np.nan_to_num(np.array([np.nan, 2.0]))[0])", "nan-int"),
    # Merge keys: the key's name, then its type.
    fail('by_id = {c["id"]: c for c in customers}', "key-name", "customer_id"),
    ok("customers[0]"),
    ok('by_id = {c["customer_id"]: c for c in customers}', "key-name"),
    fail('joined = [{**r, **by_id[r["customer_id"]]} for r in rows]', "key-type", "int("),
    ok('joined = [{**r, **by_id[int(r["customer_id"])]} for r in rows]', "key-type"),
    # Off by one.
    fail('last = sales["region"][3]', "last", "[-1]"),
    ok('last = sales["region"][-1]', "last"),
    fail(
        'roll = np.convolve(np.arange(5), np.ones(3), "valid")\nassert roll.shape == (4,), roll.shape',
        "window",
        "(3,)",
    ),
    ok('roll = np.convolve(np.arange(5), np.ones(3), "valid")\nassert roll.shape == (3,), roll.shape', "window"),
    fail(
        'names = []\nfor i in range(1, len(customers) + 1):\n    names.append(customers[i]["name"])',
        "range",
        "range(len(customers))",
    ),
    ok('names = []\nfor i in range(len(customers)):\n    names.append(customers[i]["name"])', "range"),
    # A typo in a method, and a method the type does not have.
    fail("arr2 = np.arange(6).reshpe(2, 3)", "typo", "reshape"),
    ok("arr2 = np.arange(6).reshape(2, 3)", "typo"),
    fail('sales["amount"].mean()', "list-mean", "nanmean"),
    ok('type(sales["amount"])'),
    ok('np.nanmean(np.array(sales["amount"], dtype=float))', "list-mean"),
    # A failure nobody fixes, then unrelated work.
    fail('np.linalg.inv(np.zeros((2, 2)))'),
    ok("len(customers)"),
    ok("np.eye(2)"),
    # Quoting in JSON.
    fail("cfg = json.loads(\"{'a': 1}\")", "json", '{"a": 1}'),
    ok("cfg = json.loads('{\"a\": 1}')", "json"),
    # An empty group.
    fail(
        'share = sales["amount"].count(None) / len([r for r in sales["region"] if r == "east"])',
        "empty",
        "max(1,",
    ),
    ok('share = sales["amount"].count(None) / max(1, len([r for r in sales["region"] if r == "east"]))', "empty"),
    # A syntax error (raised before the cell runs).
    fail('if total > 10\n    big = "yes"', "syntax", "if total > 10:"),
    ok('if total > 10:\n    big = "yes"', "syntax"),
    # A key that is not always there.
    fail('by_region = dict(zip(sales["region"], sales["amount"]))\nby_region["east"]', "get", ".get("),
    ok('by_region = dict(zip(sales["region"], sales["amount"]))\nby_region.get("east", 0.0)', "get"),
    # Two failures open at once, fixed in the other order.
    fail('med_amount = np.median(np.array(sales["amount"]))', "median-none", "dtype=float"),
    fail('ranked = sorted(customers, key=lambda c: c["nme"])', "sort-key", 'c["name"]'),
    ok('ranked = sorted(customers, key=lambda c: c["name"])', "sort-key"),
    ok('med_amount = np.median(np.array(sales["amount"], dtype=float))', "median-none"),
    # Strings and numbers.
    fail('codes = [c.zfill(3) for c in sales["customer_id"]]', "zfill", "str(c)"),
    ok('codes = [str(c).zfill(3) for c in sales["customer_id"]]', "zfill"),
    fail("x_, y_ = np.arange(3)", "unpack", "z_"),
    ok("x_, y_, z_ = np.arange(3)", "unpack"),
    fail("col_sums = np.ones((2, 3)).sum(axis=2)", "axis", "axis=0"),
    ok("col_sums = np.ones((2, 3)).sum(axis=0)", "axis"),
    fail("stacked = np.concatenate([np.ones((2, 2)), np.ones((2, 3))])", "concat-axis", "axis=1"),
    ok("np.ones((2, 3)).shape"),
    ok("stacked = np.concatenate([np.ones((2, 2)), np.ones((2, 3))], axis=1)", "concat-axis"),
    fail("mid = customers[len(customers) / 2]", "floordiv", "// 2"),
    ok("mid = customers[len(customers) // 2]", "floordiv"),
    fail("print(custommers[0])", "name-typo", "customers[0]"),
    ok("print(customers[0])", "name-typo"),
    fail("q = np.percentile(np.arange(10), q=150)", "percentile", "q=50"),
    ok("q = np.percentile(np.arange(10), q=50)", "percentile"),
    fail('order = sorted(sales["amount"])', "sort-none", "is not None"),
    ok('order = sorted(a for a in sales["amount"] if a is not None)', "sort-none"),
    fail('Path("data/out.bin").write_text(b"abc")', "bytes", "write_bytes"),
    ok('Path("data/out.bin").write_bytes(b"abc")', "bytes"),
    # Three failures of one cell before it runs.
    fail('hist = np.histogram(sales["amount"])', "hist", "is not None"),
    fail('hist = np.histogram(np.array(sales["amount"]))', "hist", "is not None"),
    fail('hist = np.histogram(np.array(sales["amount"], dtype=float))', "hist", "is not None"),
    ok('hist = np.histogram(np.array([a for a in sales["amount"] if a is not None], dtype=float))', "hist"),
    # A variable defined in a cell that was not run yet: run it, then rerun unchanged.
    fail("scaled = normalize(np.arange(4.0))", "define", "def normalize"),
    ok("def normalize(v):\n    return (v - v.min()) / (v.max() - v.min())"),
    ok("scaled = normalize(np.arange(4.0))", "define"),
    # Another failure nobody fixes; the next cells look like it but do other things.
    fail('counts = np.bincount(np.array([1, -1, 2]))'),
    ok('n_regions = len(set(sales["region"]))'),
    ok('summary = {"rows": len(rows), "customers": len(customers)}'),
    ok('print(summary)'),
    fail('ratio = summary["orders"] / summary["customers"]', "summary", "rows"),
    ok('summary.keys()'),
    ok('ratio = summary["rows"] / summary["customers"]', "summary"),
    ok("ratio"),
    fail('dates = [d.split("-")[1] for d in ["2024-01-05", "2024/02/07"]]\nmonths = [int(m) for m in dates]', "date", 'replace("/", "-")'),
    ok('dates = [d.replace("/", "-").split("-")[1] for d in ["2024-01-05", "2024/02/07"]]\nmonths = [int(m) for m in dates]', "date"),
    ok("months"),
]




# Written after THRESHOLD and the similarity measure were chosen on SESSION, and run
# once to check them: new errors, new fixes, new look-around cells. Never tuned on.
HELD_OUT_SETUP = '''\
import math

import numpy as np

orders = [
    {"order_id": 1, "cust": "a", "qty": 2, "price": 3.5},
    {"order_id": 2, "cust": "b", "qty": 1, "price": None},
    {"order_id": 3, "cust": "a", "qty": 5, "price": 1.25},
]
temps = np.array([21.5, 22.0, np.nan, 23.1, 22.8])'''

HELD_OUT: list[Cell] = [
    ok(HELD_OUT_SETUP),
    fail('qty_total = sum(o["quantity"] for o in orders)', "h-qty", 'o["qty"]'),
    ok("orders[0].keys()"),
    ok('qty_total = sum(o["qty"] for o in orders)', "h-qty"),
    fail('revenue = sum(o["qty"] * o["price"] for o in orders)', "h-revenue", "or 0.0"),
    ok('revenue = sum(o["qty"] * (o["price"] or 0.0) for o in orders)', "h-revenue"),
    fail("avg_temp = temps.mean()\nassert not math.isnan(avg_temp)", "h-nan", "nanmean"),
    ok("np.isnan(temps).sum()"),
    ok("avg_temp = np.nanmean(temps)\nassert not math.isnan(avg_temp)", "h-nan"),
    fail("weekly = temps.reshape(-1, 7)", "h-reshape", "reshape(-1, 5)"),
    ok("temps.shape"),
    ok("weekly = temps[:5].reshape(-1, 5)", "h-reshape"),
    fail("import maths", "h-import", "import math"),
    ok("import math", "h-import"),
    fail("diffs = np.diff(temps, axis=1)", "h-axis", "np.diff(temps)"),
    ok("diffs = np.diff(temps)", "h-axis"),
    fail('cust_orders = {}\nfor o in orders:\n    cust_orders[o["cust"]] += 1', "h-count", ".get("),
    ok("len(orders)"),
    ok('cust_orders = {}\nfor o in orders:\n    cust_orders[o["cust"]] = cust_orders.get(o["cust"], 0) + 1', "h-count"),
    fail(
        "window_means = [temps[i:i + 3].mean() for i in range(len(temps))]\nassert len(window_means) == 3",
        "h-window",
        "len(temps) - 2",
    ),
    ok("window_means = [temps[i:i + 3].mean() for i in range(len(temps) - 2)]\nassert len(window_means) == 3", "h-window"),
    fail('top = max(orders, key=lambda o: o["price"])', "h-max", "or 0"),
    ok('top = max(orders, key=lambda o: o["price"] or 0)', "h-max"),
    fail('ids = np.array([o["order_id"] for o in orders], dtype="int8")\nids[0] = 300', "h-overflow", "int16"),
    ok('ids = np.array([o["order_id"] for o in orders], dtype="int16")\nids[0] = 300', "h-overflow"),
    fail("math.log(0)"),
    ok('counts = {c: 0 for c in "ab"}'),
    fail('with open("orders.json") as fh:\n    data = fh.read()', "h-file", 'open("orders.json", "w")'),
    ok('open("orders.json", "w").write("[]")'),
    ok('with open("orders.json") as fh:\n    data = fh.read()', "h-file"),
    fail("matrix = np.array([[1, 2], [3, 4]])\ninv = np.linalg.inv(matrix[:, 0])", "h-inv", "inv(matrix)"),
    ok("matrix = np.array([[1, 2], [3, 4]])\ninv = np.linalg.inv(matrix)", "h-inv"),
    fail("label = f\"{orders[0]['cust']:>5d}\"", "h-format", ":>5}"),
    ok("label = f\"{orders[0]['cust']:>5}\"", "h-format"),
    fail("z = (temps - temps.mean()) / temps.std()\nassert not np.isnan(z).any()", "h-zscore", "nanstd"),
    ok("temps"),
    ok(
        "z = (temps - np.nanmean(temps)) / np.nanstd(temps)\nassert not np.isnan(z[~np.isnan(temps)]).any()",
        "h-zscore",
    ),
    fail('sorted_orders = sorted(orders, key="price")', "h-sort", "lambda o"),
    fail('sorted_orders = sorted(orders, key=lambda o: o["price"])', "h-sort", "or 0.0"),
    ok('sorted_orders = sorted(orders, key=lambda o: o["price"] or 0.0)', "h-sort"),
    ok("print(qty_total, revenue)"),
]


def true_pairs(cells: list[Cell]) -> dict[int, int]:
    """Failure cell index -> index of the cell that fixes it (every failure of a chain)."""
    fixes = {c.pair: i for i, c in enumerate(cells) if c.expect == "ok" and c.pair}
    return {i: fixes[c.pair] for i, c in enumerate(cells) if c.expect == "fail" and c.pair in fixes}
