"""Lines of installed packages' code and docs that the secret scan flags, today and at a baseline.

    python benchmarks/secret_false_alarms.py [--base 462b06f] [--root SITE_PACKAGES] [--out hits.tsv]

Installed packages hold almost no secrets, and much code that looks like them (``password =
getpass()``, ``token_type = "bearer"``, test fixtures, docs showing ``--password <pw>``), so
the lines flagged there are an upper bound on false alarms. Every line of every
``.py``/``.md``/``.rst``/``.txt`` file under ``--root`` (the site-packages of the
environment running this) is scanned alone by ``find_secrets`` of today's tree and of
``--base``; printed: the lines, the lines each flags, and the lines flagged only today,
and those flagged only at the base; ``--out`` writes both as a TSV (which scan, file, line
number, kinds, the line) to read one by one.
"""

from __future__ import annotations

import argparse
import site
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from secret_baseline import load_scan  # noqa: E402

SUFFIXES = (".py", ".md", ".rst", ".txt")
MAX_LINE = 4096  # minified one-line files are not what a person pastes


def _lines(root: Path):
    for path in sorted(root.rglob("*")):
        if path.suffix not in SUFFIXES or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip() and len(line) <= MAX_LINE:
                yield path, n, line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="462b06f", help="the git revision to compare with")
    parser.add_argument("--root", type=Path, default=Path(site.getsitepackages()[0]))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    from jupymem.intake.secrets_scan import find_secrets

    old = load_scan(args.base).find_secrets
    lines = old_hits = new_hits = 0
    only_new, only_old = [], []
    t = time.perf_counter()
    for path, n, line in _lines(args.root):
        lines += 1
        was = bool(old(line))
        found = find_secrets(line)
        old_hits += was
        new_hits += bool(found)
        if found and not was:
            only_new.append((path.relative_to(args.root), n, ",".join(f.kind for f in found), line.strip()[:300]))
        elif was and not found:
            only_old.append((path.relative_to(args.root), n, "-", line.strip()[:300]))
    print(f"root         {args.root}")
    print(f"lines        {lines:,}")
    print(f"flagged      {args.base}: {old_hits:,}   today: {new_hits:,}")
    print(f"only today   {len(only_new):,}")
    print(f"only at base {len(only_old):,}")
    print(f"seconds      {time.perf_counter() - t:.0f}")
    if args.out:
        rows = [("today", *r) for r in only_new] + [("base", *r) for r in only_old]
        args.out.write_text("".join(f"{w}\t{p}\t{n}\t{k}\t{line}\n" for w, p, n, k, line in rows), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
