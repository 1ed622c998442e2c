"""How long the text checks take on the worst inputs we know: they must stay linear.

    python benchmarks/bench_inputs.py [--runs 5] [--json]

Every statement, quote and failure message goes through the secret scan, the
language detector and (failures) the diagnosis, in a kernel's hook or a server
request. A pattern that backtracks would turn one hostile input into minutes,
so these inputs are timed here (the unit tests check only their answers):

* ``diagnose``: a ValueError carrying a 10 MB DataFrame repr;
* ``secret scan``: 16 KB of one repeated unit each (``a.``, ``sk-``, a JWT-shaped
  run, a key file's header, an AWS key id, ``password: ``, ...): what makes a
  backtracking pattern explode;
* ``language``: a 60 KB English text, and 16 KB of repeated units.

Each line is the median of ``--runs`` runs of the slowest input of its group;
the budget is 1 s each (measured well under 0.1 s on a 2-core shared machine).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BUDGET_S = 1.0
SECRET_UNITS = [
    "a.", "a-", "a_", "a:", "sk-", "A1", "eyJabcdefgh.", "http://a:", "token = ", "'a ",
    # where the rules told by context start: key files, key pairs, passwords by their syntax
    "PuTTY-User-Key-File-3:", "PuTTY-User-Key-File-3: ssh-rsa\n", "---- BEGIN SSH2 ", "AKIA0123456789ABCDEF,",
    "AKIA0123456789ABCDEF ", "AC0123456789abcdef0123456789abcdef ", "0123456789:", "password ", "the password is ",
    "password: ", "pw is a1 ", "PGPASSWORD=", "DB_PASS=", "mysql -p", "Password=a;", "host=a ", "machine a login b ",
    "a:1:b:c:", "AAAA", "sl.", "\\n",
    # the generic layer: credential-bearing names in each syntax, URLs, key material
    'a_token: "x', "?key=a", "tokenkey:", 'key="a_token" value="', ";pwd={a}", "a.b.password = ", "x_pass: ",
    "<a_password>", '("a_token", "', "https://a/hooks/", "LS0tLS1CRUdJTi", "MII", "auth=('a', '",
    # command lines, SQL, protocol lines, calls, headers and cookies (secret_commands, secret_calls)
    "psexec -p ", "git config a.password ", "-u a -p ", "/u:a /p:", "net user ", "CREATE USER a PASSWORD '",
    "IDENTIFIED BY ", "AUTH a ", "USER a\nPASS ", "a1 LOGIN a ", "ConvertTo-SecureString '", "storePassword 'a'\n",
    "{ password ", "Cookie: sid=", "cookies={'sid': '", "NetworkCredential('a', '", "Authorization: X ",
]
LANGUAGE_UNITS = ["a.", "a-", "a_", "A1", "a@", "'a ", '"a', "`a", "é"]


def _median_seconds(fn: Callable[[], Any], runs: int) -> float:
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def _raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:  # noqa: B036 - we want the raised object, traceback and all
        return caught


def measure(runs: int) -> dict[str, float]:
    from jupymem.intake.capture import MAX_STATEMENT_BYTES, diagnose
    from jupymem.intake.language import detect
    from jupymem.intake.secrets_scan import find_secrets

    huge = _raised(ValueError("shapes differ\n" + ("0  1.0  2.0  customer_x\n" * 400_000)))
    english = " ".join((ROOT / "tests" / "data" / "english_statements.txt").read_text(encoding="utf-8").split("\n")) * 3
    out = {"diagnose_huge_message_s": _median_seconds(lambda: diagnose(huge), runs)}
    # Each text is built once, as the lambda's default, outside the timed call.
    out["secret_scan_worst_s"] = max(
        _median_seconds(lambda t=(u * (MAX_STATEMENT_BYTES // len(u)))[:MAX_STATEMENT_BYTES]: find_secrets(t), runs)  # noqa: B008
        for u in SECRET_UNITS
    )
    out["language_large_text_s"] = _median_seconds(lambda: detect(english), runs)
    out["language_worst_unit_s"] = max(
        _median_seconds(lambda t=u * (16_000 // len(u)): detect(t), runs) for u in LANGUAGE_UNITS  # noqa: B008
    )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report: dict[str, Any] = measure(args.runs)
    report["load_average"] = os.getloadavg()[0]
    over = [k for k, v in report.items() if k.endswith("_s") and v > BUDGET_S]
    if args.json:
        print(json.dumps({**report, "over_budget": over}, indent=2))
    else:
        for key, value in report.items():
            if key.endswith("_s"):
                print(f"{key:<28} {value * 1e3:8.1f} ms{'   OVER BUDGET' if key in over else ''}")
        print(f"{'load average':<28} {report['load_average']:8.1f}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
