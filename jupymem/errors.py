"""One error base for everything jupymem refuses or cannot do.

The core raises these; each face translates them in one place: magics into
``UsageError``, the REST handlers into JSON with ``http_status``, the CLI into a
message on stderr and ``exit_code``. Every message says what to do next.
"""

from __future__ import annotations


class JupymemError(Exception):
    """Base class. ``code`` is a stable machine-readable name for REST clients."""

    code = "error"
    http_status = 400
    exit_code = 2

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class NotAGitRepository(JupymemError):
    """Raised when a path is not inside a git working tree (nothing is created)."""

    code = "not_a_git_repository"


class NoMemory(JupymemError):
    """Raised when an operation needs memory but the repository has none yet."""

    code = "no_memory"
    http_status = 404


class UnknownMemory(JupymemError):
    """Raised when an id (or id prefix) matches no memory, or more than one."""

    code = "unknown_memory"
    http_status = 404


class UnknownEvidence(JupymemError):
    """Raised when an evidence handle is not staged."""

    code = "unknown_evidence"
    http_status = 404


class InvalidStatement(JupymemError):
    """Raised for empty, oversized, binary or otherwise unusable input."""

    code = "invalid_statement"


class InvalidField(InvalidStatement):
    """Raised when one field of an event (a kind, a topic, a cell id, a timestamp, a
    reference to another memory ...) is not acceptable. ``field`` names it, e.g.
    ``memory.provenance.cell_id``; the message says why and what is allowed."""

    code = "invalid_field"

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


class SecretRefused(JupymemError):
    """Raised when a statement contains a secret; it is never stored."""

    code = "secret_refused"


class LanguageRefused(JupymemError):
    """Raised for a non-English statement when no model can translate it."""

    code = "language_refused"


class InvalidTransition(JupymemError):
    """Raised for a change that makes no sense, e.g. retiring a retired memory."""

    code = "invalid_transition"
    http_status = 409


class RegistryCorrupt(JupymemError):
    """Raised when the bindings registry fails its checksum or cannot be parsed."""

    code = "registry_corrupt"
    http_status = 500


class DatabaseDamaged(JupymemError):
    """Raised when a project database cannot be used: it is not a database any more
    (truncated, overwritten, zeroed), fails SQLite's integrity check, or is empty.
    The message names the file; ``jupymem doctor`` checks every database, recovers
    what it can from the event log and says what it could not."""

    code = "database_damaged"
    http_status = 503
    exit_code = 1


class DatabaseLost(DatabaseDamaged):
    """Raised when a project's database is missing, empty or shorter than the history
    the registry recorded for it (it was deleted, replaced or rolled back). Nothing
    is recreated in its place until a person decides: restore the file, or run
    ``jupymem doctor --accept-loss``."""

    code = "database_lost"


class ReadOnlyHome(JupymemError):
    """Raised when something must be written but the memory home (or a project
    database in it) is read-only. Reading still works."""

    code = "read_only_home"
    http_status = 503


class StorageError(JupymemError):
    """Raised when the disk refuses a write or a read fails below SQLite (disk full,
    I/O error). Nothing half-written is kept: the transaction rolls back."""

    code = "storage_error"
    http_status = 503
    exit_code = 1


class SchemaTooNew(JupymemError):
    """Raised when a database was written by a newer jupymem."""

    code = "schema_too_new"
    http_status = 500


class CorruptLog(JupymemError):
    """Raised when an event log (a database's or an import file's) fails verification."""

    code = "corrupt_log"
    http_status = 500
    exit_code = 1


class InvalidImport(JupymemError):
    """Raised when a file given to ``import`` is not a jupymem export or fails verification."""

    code = "invalid_import"


class OtherProjectImport(InvalidImport):
    """Raised when an export comes from another repository (or does not say which) and
    the import was not told that merging another project's memory is meant."""

    code = "other_project_import"


class SharingError(JupymemError):
    """Raised when the repository's shared ``.jupymem/`` folder cannot be read or written
    (permissions, a full disk); nothing was recorded."""

    code = "sharing_error"
    http_status = 409


class MissingDependency(JupymemError):
    """Raised when an optional dependency is needed; the message names the pip command."""

    code = "missing_dependency"
    http_status = 501


class ModelError(JupymemError):
    """Raised when a configured language model cannot be reached or answers badly."""

    code = "model_error"
    http_status = 502
