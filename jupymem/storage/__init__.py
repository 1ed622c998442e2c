"""Storage: one project database, its hash-chained event log, and everything that
repairs it.

store (connection, migrations, the event log), projection (events -> the tables that
answer questions), validate (one check for every event), maintenance (verify, rebuild,
gc, export, import), damage (a broken store told apart from a bug), recovery (a
project back from a damaged database), marks (the history mark beside a database) and
registry (which repository a path belongs to, and which database holds its memory).
This is the one place that writes SQL for memory, so a second engine has one room to
plug into.

Imports intake and the shared vocabulary only; never sharing, retrieval or anything
above them (what recovery needs from the shared log is passed in by ``core.opening``).
"""
