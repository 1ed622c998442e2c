"""The secret scan of another git revision, imported beside today's: what a change is measured against.

    from secret_baseline import load_scan
    old_find = load_scan("462b06f").find_secrets

The revision's ``secrets_scan.py`` and ``secret_rules.py`` (and the generic layer's modules,
``secret_generic.py``, ``secret_calls.py``, ``secret_commands.py``, where it has them) are
copied out of git into a temporary package and imported from there, so both scans run in one
process, on the same input, in the same minutes.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
_FILES = ("secrets_scan.py", "secret_rules.py", "secret_generic.py", "secret_calls.py", "secret_commands.py")
_OPTIONAL = frozenset(_FILES[2:])  # older revisions have fewer


def load_scan(rev: str) -> ModuleType:
    """``jupymem.intake.secrets_scan`` as it was at ``rev``, as a module of its own."""
    package = f"_secrets_at_{rev.replace('-', '_').replace('~', '_').replace('^', '_')}"
    if package in sys.modules:
        return importlib.import_module(f"{package}.secrets_scan")
    where = Path(tempfile.mkdtemp(prefix="secrets-baseline-")) / package
    where.mkdir()
    (where / "__init__.py").write_text("")
    for name in _FILES:
        proc = subprocess.run(["git", "show", f"{rev}:jupymem/intake/{name}"], cwd=ROOT, capture_output=True, check=False)
        if proc.returncode == 0:
            (where / name).write_bytes(proc.stdout)
        elif name not in _OPTIONAL:
            raise SystemExit(f"git show {rev}:jupymem/intake/{name} failed: {proc.stderr.decode().strip()}")
    sys.path.insert(0, str(where.parent))
    return importlib.import_module(f"{package}.secrets_scan")
