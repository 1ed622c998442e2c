"""One error base for everything jupymem refuses or cannot do.

The core raises these; each face translates them in one place: magics into
``UsageError``, the REST handlers into JSON with ``http_status``, the CLI into a
message on stderr and ``exit_code``. Every message says what to do next.
"""

from __future__ import annotations


class JupymemError(Exception):
    """Base class. ``code`` is a stable machine-readable name for REST clients.

    A subclass states what differs from its base in its header, one line a kind of
    error: ``class NoMemory(JupymemError, code="no_memory", http_status=404)``."""

    code = "error"
    http_status = 400
    exit_code = 2

    def __init_subclass__(cls, *, code: str, http_status: int | None = None, exit_code: int | None = None) -> None:
        super().__init_subclass__()
        cls.code = code
        if http_status is not None:
            cls.http_status = http_status
        if exit_code is not None:
            cls.exit_code = exit_code

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class NotAGitRepository(JupymemError, code="not_a_git_repository"):
    """Raised when a path is not inside a git working tree (nothing is created)."""


class NoMemory(JupymemError, code="no_memory", http_status=404):
    """Raised when an operation needs memory but the repository has none yet."""


class UnknownMemory(JupymemError, code="unknown_memory", http_status=404):
    """Raised when an id (or id prefix) matches no memory, or more than one."""


class UnknownEvidence(JupymemError, code="unknown_evidence", http_status=404):
    """Raised when an evidence handle is not staged."""


class InvalidStatement(JupymemError, code="invalid_statement"):
    """Raised for empty, oversized, binary or otherwise unusable input."""


class InvalidField(InvalidStatement, code="invalid_field"):
    """Raised when one field of an event (a kind, a topic, a cell id, a timestamp, a
    reference to another memory ...) is not acceptable. ``field`` names it, e.g.
    ``memory.provenance.cell_id``; the message says why and what is allowed."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


class SecretRefused(JupymemError, code="secret_refused"):
    """Raised when a statement contains a secret; it is never stored."""


class LanguageRefused(JupymemError, code="language_refused"):
    """Raised for a non-English statement when no model can translate it."""


class InvalidTransition(JupymemError, code="invalid_transition", http_status=409):
    """Raised for a change that makes no sense, e.g. retiring a retired memory."""


class RegistryCorrupt(JupymemError, code="registry_corrupt", http_status=500):
    """Raised when the bindings registry fails its checksum or cannot be parsed."""


class DatabaseDamaged(JupymemError, code="database_damaged", http_status=503, exit_code=1):
    """Raised when a project database cannot be used: it is not a database any more
    (truncated, overwritten, zeroed), fails SQLite's integrity check, or is empty.
    The message names the file; ``jupymem doctor`` checks every database, recovers
    what it can from the event log and says what it could not."""


class DatabaseLost(DatabaseDamaged, code="database_lost"):
    """Raised when a project's database is missing, empty or shorter than the history
    the registry recorded for it (it was deleted, replaced or rolled back). Nothing
    is recreated in its place until a person decides: restore the file, or run
    ``jupymem doctor --accept-loss``."""


class ReadOnlyHome(JupymemError, code="read_only_home", http_status=503):
    """Raised when something must be written but the memory home (or a project
    database in it) is read-only. Reading still works."""


class StorageError(JupymemError, code="storage_error", http_status=503, exit_code=1):
    """Raised when the disk refuses a write or a read fails below SQLite (disk full,
    I/O error). Nothing half-written is kept: the transaction rolls back."""


class SchemaTooNew(JupymemError, code="schema_too_new", http_status=500):
    """Raised when a database was written by a newer jupymem."""


class CorruptLog(JupymemError, code="corrupt_log", http_status=500, exit_code=1):
    """Raised when an event log (a database's or an import file's) fails verification."""


class InvalidImport(JupymemError, code="invalid_import"):
    """Raised when a file given to ``import`` is not a jupymem export or fails verification."""


class OtherProjectImport(InvalidImport, code="other_project_import"):
    """Raised when an export comes from another repository (or does not say which) and
    the import was not told that merging another project's memory is meant."""


class SharingError(JupymemError, code="sharing_error", http_status=409):
    """Raised when the repository's shared ``.jupymem/`` folder cannot be read or written
    (permissions, a full disk); nothing was recorded."""


class MissingDependency(JupymemError, code="missing_dependency", http_status=501):
    """Raised when an optional dependency is needed; the message names the pip command."""


class ModelError(JupymemError, code="model_error", http_status=502):
    """Raised when a configured language model cannot be reached or answers badly."""


class AccessDenied(JupymemError, code="access_denied", http_status=403):
    """Raised when the team database refuses a person a project's memory: they are not a
    member of it, or tried to write a row that is not theirs to write."""


class NotOnTeamEngine(JupymemError, code="not_on_team_engine", http_status=501):
    """Raised for what the PostgreSQL team engine cannot do yet (the message names it);
    nothing was changed. The repository's own SQLite memory can do it."""


class AlreadyThere(JupymemError, code="already_there", http_status=409):
    """Raised when ``migrate --to`` names where the repository's memory is already (and
    nothing of its own is left to move); nothing was changed."""


def warn(message: str, *args: object) -> None:
    """What went wrong without stopping anyone, on the ``jupymem`` logger (a background
    job that failed, a safety net not written). logging is imported only when there is a
    warning to give: it costs every command ~5 ms to import."""
    import logging

    logging.getLogger("jupymem").warning(message, *args)
