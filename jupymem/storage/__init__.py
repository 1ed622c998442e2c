"""Storage: one project database, its hash-chained event log, and everything that
repairs it.

database (driver, migrations, connection, the meta table), eventlog (the hash-chained
log of every change), projection (events -> the tables that answer questions),
validate (one check for every event), maintenance (verify, rebuild, gc, export,
import), damage (a broken store told apart from a bug), recovery (a project back from
a damaged database), marks (the history mark beside a database) and registry (which
repository a path belongs to, and which database holds its memory).

The room a second engine plugs into: ``reads`` holds the ``Store`` protocol (and its
SQLite engine, ``SqliteStore``) that retrieval reads memory through, ``vectors`` the dense
leg's stored vectors (sqlite-vec), ``conversations`` the ``%%ask`` messages, ``fts`` FTS5's
query language (its escaping, in one place), and ``postgres`` the team engine beside
SQLite (the same eventlog and projection over PostgreSQL, row-level security per
project). Not yet the only code that speaks SQL: core (Project's own reads, opening, the
block, the overview), sharing and bench still query the connection they hold (``tests/test_architecture.py``'s ``SQL_NOT_MOVED_YET`` says why).

Imports intake and the shared vocabulary only; never sharing, retrieval or anything
above them (what recovery needs from the shared log is passed in by ``core.opening``).
"""
