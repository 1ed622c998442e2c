"""Core: ``Project``, the one object every face calls, and how projects are opened.

project (``Project``: one repository's memory, a thin facade of reads and writes) and
what it delegates to: reads (memories from the projection), staged (failed cells kept for
citing), payload (a memory as an event carries it), recording (writing events) and upkeep
(verify, rebuild, export, import); opening (find, require, init), doctor (check and
repair every database), overview (what jupymem knows about a path, for every face's
status) and block (active memories -> the ``<project_memory>`` block).

Imports sharing, retrieval, storage, intake and the shared vocabulary; never
assistants, measure or the faces, which stand on it.
"""

from __future__ import annotations

from .project import Project

__all__ = ["Project"]
