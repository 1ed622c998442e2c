"""The public API as a notebook user meets it: README's "Python API" runs as written, and
every record type, literal type and error a caller may need is importable from ``jupymem``."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

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


def _as_dataclasses_would(cls: type) -> type:
    """``cls``'s fields in a class dataclasses generates every method of."""
    import dataclasses

    fields = [(f.name, f.type, f) for f in dataclasses.fields(cls)]
    return dataclasses.make_dataclass(cls.__name__, fields, frozen=True)


def test_records_compare_hash_and_show_as_dataclasses_would() -> None:
    """The records share one ``__eq__``/``__hash__``/``__repr__`` (``models._Plain``)
    instead of dataclasses generating them per class; what they mean must not move."""
    import dataclasses

    from jupymem.models import Evidence, Memory, Provenance

    prov = Provenance(notebook="a.ipynb", execution_count=3)
    m = Memory(
        id="m-1", kind="decision", statement="Use UTC.", standing="supported", status="active",
        created_at="2026-01-01T00:00:00Z", valid_from="2026-01-01T00:00:00Z", topic="time", provenance=prov,
        evidence=(Evidence(handle="ev-1", session="s", ename="KeyError", evalue="'x'", diagnosis=("no key",),
                           excerpt="d['x']", created_at="t"),),
    )
    twin = _as_dataclasses_would(Memory)(**{f.name: getattr(m, f.name) for f in dataclasses.fields(m)})
    assert repr(m) == repr(twin)
    assert hash(m) == hash(twin)
    assert m == dataclasses.replace(m) and m is not dataclasses.replace(m)
    assert m != dataclasses.replace(m, topic="other") and m != twin  # another class is never equal
    assert (m == "m-1") is False and m.__eq__("m-1") is NotImplemented
    assert len({m, dataclasses.replace(m), dataclasses.replace(m, statement="Use local time.")}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.topic = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):  # a dict field is unhashable, as a generated __hash__ says too
        hash(models.HistoryEntry(memory_id="m-1", seq=1, at="t", action="recorded", detail={}))
