"""The public API as a notebook user meets it: README's "Python API" runs as written, and
every record type, literal type and error a caller may need is importable from ``jupymem``."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

import jupymem
from conftest import make_repo
from jupymem import errors, models

ROOT = Path(__file__).resolve().parents[1]


def _readme_block(heading: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(f"\n{heading}\n", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_python_api_runs_as_written(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    done = subprocess.run([sys.executable, "-c", _readme_block("## Python API")], cwd=repo, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert re.search(r"^m-\w+ constraint supported active$", out, re.M), out
    assert "Revenue is reported in EUR, never USD." in out  # found, or shown as closest
    assert re.search(r"^superseded -> m-\w+$", out, re.M), out
    assert "<project_memory" in out
    assert re.search(r"^secret_refused ", out, re.M), out
    assert "ghp_" + "a" * 36 not in out  # the refusal names the secret's kind, never repeats it


def test_every_error_and_record_is_exported() -> None:
    raised = {name for name, cls in inspect.getmembers(errors, inspect.isclass)
              if issubclass(cls, errors.JupymemError) and cls.__module__ == errors.__name__}
    records = {name for name, cls in inspect.getmembers(models, inspect.isclass)
               if cls.__module__ == models.__name__ and not name.startswith("_")}
    assert raised and records
    missing = (raised | records | {"Kind", "Standing", "Status", "SearchStatus"}) - set(jupymem.__all__)
    assert not missing, missing
    for name in jupymem.__all__:
        assert getattr(jupymem, name) is not None, name
