"""jupymem: durable memory for the notebooks of a git repository.

The public API is small: ``init(path)`` binds a repository and returns its
``Project``; ``project(path)`` returns it only if it already has memory (it
never creates anything); ``status(path)`` describes either case;
``context(prompt, path)`` is the memory any assistant should receive with a
prompt. Everything else hangs off ``Project``. Heavy modules are imported on
first use so that ``%load_ext jupymem`` stays fast.

What ``Project`` hands back are the frozen records of ``jupymem.models`` (``Memory``,
``SearchResult`` and its ``Hit``s, ``Recorded``, ``Block``, ``Evidence`` ...; and what
memory says about itself: ``RepositoryStatus`` from ``status``, ``SharingStatus``,
``ShareResult``, ``DenseStatus``), each with ``to_dict()``, the JSON every face shows; the
literal types ``Kind``, ``Standing``, ``Status``, ``SharingState`` name their fields'
values. Every error is a ``JupymemError`` with a ``code``; the specific ones are exported
too (``SecretRefused``, ``InvalidStatement``, ``NoMemory`` ...), so that a notebook can
catch exactly what it expects.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import Settings
from .errors import (
    JupymemError,
    NotAGitRepository,
    NoMemory,
    UnknownMemory,
    UnknownEvidence,
    InvalidStatement,
    InvalidField,
    SecretRefused,
    LanguageRefused,
    InvalidTransition,
    RegistryCorrupt,
    DatabaseDamaged,
    DatabaseLost,
    ReadOnlyHome,
    StorageError,
    SchemaTooNew,
    CorruptLog,
    InvalidImport,
    OtherProjectImport,
    SharingError,
    MissingDependency,
    ModelError,
    AccessDenied,
    AlreadyThere,
    NotOnTeamEngine,
)
from .models import (
    Block,
    Evidence,
    Fix,
    HistoryEntry,
    Hit,
    Kind,
    Memory,
    Provenance,
    Recorded,
    SearchResult,
    SearchStatus,
    Similar,
    Standing,
    Status,
    Tier,
)

if TYPE_CHECKING:
    from .reports import (
        BlockSize,
        DenseState,
        DenseStatus,
        Embedding,
        ProjectMatch,
        RepositoryStatus,
        SharedFile,
        ShareResult,
        SharingSeen,
        SharingState,
        SharingStatus,
    )
    from .core.project import Project

__version__ = "0.1.0"
__all__ = [
    "AccessDenied",
    "AlreadyThere",
    "NotOnTeamEngine",
    "Block",
    "BlockSize",
    "CorruptLog",
    "DatabaseDamaged",
    "DatabaseLost",
    "DenseState",
    "DenseStatus",
    "Embedding",
    "Evidence",
    "Fix",
    "HistoryEntry",
    "Hit",
    "InvalidField",
    "InvalidImport",
    "InvalidStatement",
    "InvalidTransition",
    "JupymemError",
    "Kind",
    "LanguageRefused",
    "Memory",
    "MissingDependency",
    "ModelError",
    "NoMemory",
    "NotAGitRepository",
    "OtherProjectImport",
    "Project",
    "ProjectMatch",
    "Provenance",
    "ReadOnlyHome",
    "Recorded",
    "RegistryCorrupt",
    "RepositoryStatus",
    "SchemaTooNew",
    "SearchResult",
    "SearchStatus",
    "SecretRefused",
    "Settings",
    "ShareResult",
    "SharedFile",
    "SharingError",
    "SharingSeen",
    "SharingState",
    "SharingStatus",
    "Similar",
    "Standing",
    "Status",
    "StorageError",
    "Tier",
    "UnknownEvidence",
    "UnknownMemory",
    "__version__",
    "context",
    "init",
    "project",
    "status",
]


def _settings(settings: Settings | None) -> Settings:
    return settings if settings is not None else Settings.from_env()


def init(path: str | os.PathLike[str] | None = None, *, settings: Settings | None = None) -> Project:
    """Bind the repository holding ``path`` (default: cwd) and return its project."""
    from .core.opening import init_project

    return init_project(Path(path or os.getcwd()), _settings(settings))


def project(path: str | os.PathLike[str] | None = None, *, settings: Settings | None = None) -> Project | None:
    """The project of the repository holding ``path``, or None if it has no memory."""
    from .core.opening import find_project

    return find_project(Path(path or os.getcwd()), _settings(settings))


def status(path: str | os.PathLike[str] | None = None, *, settings: Settings | None = None) -> RepositoryStatus:
    """What jupymem knows about ``path``'s repository, a ``RepositoryStatus`` (whether it has
    memory, how many of each kind, the block, search and sharing); never writes anything."""
    from .core.overview import status as _status

    return _status(Path(path or os.getcwd()), _settings(settings))


def context(prompt: str, path: str | os.PathLike[str] | None = None, *, settings: Settings | None = None) -> str:
    """The ``<project_memory>`` block plus the memories retrieved for ``prompt``, for
    any assistant; "" where the repository has no memory. Never writes."""
    from .assistants.inject import for_path

    return for_path(prompt, path, settings=settings)


# What memory says about itself (``reports``): made on first use, as ``Project`` is; the
# commands that never report status need none of these classes.
_REPORTS = frozenset({"BlockSize", "DenseState", "DenseStatus", "Embedding", "ProjectMatch", "RepositoryStatus",
                      "SharedFile", "ShareResult", "SharingSeen", "SharingState", "SharingStatus"})


def __getattr__(name: str) -> Any:
    if name == "Project":
        from .core.project import Project

        return Project
    if name in _REPORTS:
        from . import reports

        return getattr(reports, name)
    raise AttributeError(name)


def load_ipython_extension(ipython: Any) -> None:
    from .faces.magics import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from .faces.magics import unload

    unload(ipython)


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    """The ``jupymem`` server extension (enabled on install by jupyter-config/)."""
    # Called as the server collects its extensions, before Jupyter AI's are imported:
    # litellm, which they import, would otherwise fetch a remote price map (see intake/llm.py).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from .faces.server import JupymemApp

    return [{"module": "jupymem.faces.server", "app": JupymemApp}]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """The prebuilt sidebar, for ``jupyter labextension develop``."""
    return [{"src": "labextension", "dest": "jupymem"}]
