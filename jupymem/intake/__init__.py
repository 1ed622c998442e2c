"""Intake: what enters memory, cleaned and checked before anything stores it.

capture (statements and failed cells -> clean records), pairing (a failure and the run
that fixed it), language (is it English?), translate (the language policy: what must be
translated before it is stored) and llm (the model adapter that translates on the way in
and, for ``%%ask``, answers), secrets_scan and secret_rules (no secret is
ever kept), text (the one rule for invisible characters), strictjson (JSON from outside
read strictly) and clock (the one event-time format, and how far a clock is trusted).

The lowest room: it imports only the shared vocabulary (``errors``, ``config``,
``models``), never storage or anything above it, so every room may use its rules.
Heavy dependencies (litellm) are imported inside functions.
"""
