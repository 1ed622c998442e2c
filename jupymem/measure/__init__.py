"""Measure: how good and how fast memory is, through the real paths.

evaluate (``jupymem eval``: retrieval scored on a gold suite) and bench (``jupymem
bench``: speed on a corpus anyone can rebuild). Measuring tools with parsers of their
own, so argparse is allowed here.

Imports core and everything below it; never assistants (its sibling) or the faces.
"""
