"""Assistants: what a language model is told and what it may do.

inject (a request's memory context: the block, then what was retrieved for the
prompt), tools (``memory_search`` and ``memory_record``, and the honesty rule for a
model's records), assistant (one ``%%ask`` turn without IPython) and conversation (a
notebook's rolling, searchable conversation).

Imports core and everything below it; never measure (its sibling) or the faces. The
model adapter itself (``intake.llm``) sits in intake, because ``Project`` translates
statements on the way in through it.
"""
