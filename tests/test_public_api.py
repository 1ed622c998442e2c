"""The public API as a notebook user meets it: README's "Python API" runs as written, and
every record type, literal type and error a caller may need is importable from ``jupymem``."""

from __future__ import annotations

import inspect
import json
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
    assert re.search(r"^active: 1 sharing: none$", out, re.M), out  # a typed status, not a dict
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


# The JSON keys, in order, that the REST API, `--json` and the sidebar (labextension/src/tokens.ts)
# have read since status was a dict: typing the results must not change them.
STATUS_KEYS = ["path", "git", "root", "name", "memory", "project_id", "registry", "matches", "revision", "counts",
               "total", "staged", "staged_revision", "block", "database", "retrieval", "sharing", "damage",
               "read_only", "disk_full", "home", "engine", "message"]  # engine: added with the team engine
SHARING_KEYS = ["state", "folder", "files", "problems", "writer", "identity", "shared_events", "local_events",
                "private_memories", "writer_damaged"]
DENSE_KEYS = ["legs", "dense", "tier", "reason", "encoder", "encoder_reason", "encoder_load_seconds",
              "static_encoder", "transformer", "embedding", "model", "vectors", "driver", "index", "typos"]
SHARE_KEYS = ["state", "was", "created", "written", "kept_local", "file", "message"]


def test_status_results_are_typed_and_keep_their_json(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    nothing = jupymem.status(repo)
    assert isinstance(nothing, jupymem.RepositoryStatus) and nothing.memory is False
    assert list(nothing.to_dict()) == STATUS_KEYS and nothing.to_dict()["counts"] == {}
    project = jupymem.init(repo)
    project.remember("Revenue is reported in EUR, never USD.", kind="constraint")
    shared = project.share()
    assert isinstance(shared, jupymem.ShareResult) and (shared.state, shared.was) == ("on", "none")
    assert list(shared.to_dict()) == SHARE_KEYS and isinstance(shared.to_dict()["created"], list)
    assert list(project.sharing_status().to_dict()) == SHARING_KEYS  # no unseen_* outside status
    assert list(project.dense_status().to_dict()) == DENSE_KEYS
    said = jupymem.status(repo).to_dict()
    assert list(said) == STATUS_KEYS and said["total"] == 1 and said["counts"]["constraint"] == 1
    assert list(said["block"]) == ["bytes", "cap", "shown", "omitted", "revision"]
    assert list(said["retrieval"]) == DENSE_KEYS
    assert list(said["sharing"]) == [*SHARING_KEYS, "unseen_lines", "unseen_files"]
    (file,) = said["sharing"]["files"]
    assert list(file) == ["name", "lines", "applied", "problems", "waiting_until"] and file["applied"] == 1
    json.dumps(said)  # plain JSON all the way down
