"""Core records -> text for people (terminals), HTML (notebooks) and plain JSON.

This is the one place that decides how memory looks, so the magics, the CLI
and the REST API show the same things the same way. Three families, one per
audience:

* ``*_text`` (``render_text``): plain text for a terminal. Control characters are
  dropped so a stored statement can never drive the terminal (colours, cursor moves).
* ``*_html`` (``render_html``): compact HTML for a notebook output. Every piece of
  record text goes through ``html.escape``; layout is inline, colour comes from the
  class ``kind_class`` names (labextension/style/base.css).
* what both say alike (``render_common``): the ``Output`` that carries both, cleaning,
  a memory's fields and marks, history details, the status lines.
JSON is not made here: every face uses ``models.to_json``.

This module only gathers the three for the faces, which call ``render.<name>``.
Lists clip long statements (the full text is in ``show``); the block is never
altered: ``block_text`` returns it byte for byte. Stdlib only, cheap to import.
"""

from __future__ import annotations

from .render_common import (  # noqa: F401 (the limits and small words are the faces' too)
    LINE_CHARS, NOT_CONFIDENT, SAID_CHARS, Output, author_name, confidence_word, fixed_in, hit_words, kind_class,
    when,
)
from .render_html import (  # noqa: F401
    HTML_CLIP_CHARS, block_html, evidence_html, history_html, memories_html, memory_html, recorded_html, said_html,
    search_html, staged_html, status_html,
)
from .render_text import (
    block_text, evidence_text, gc_text, history_text, import_text, instructions_text, migrate_text, memories_text, memory_line, memory_text,
    recorded_text, said_text, search_text, similar_text, staged_text, status_text, verify_text,
)

__all__ = [
    "Output",
    "memory_line",
    "said_text",
    "said_html",
    "recorded_text",
    "recorded_html",
    "similar_text",
    "staged_text",
    "staged_html",
    "memory_text",
    "memory_html",
    "memories_text",
    "memories_html",
    "search_text",
    "search_html",
    "history_text",
    "history_html",
    "evidence_text",
    "evidence_html",
    "fixed_in",
    "status_text",
    "status_html",
    "verify_text",
    "gc_text",
    "import_text",
    "migrate_text",
    "instructions_text",
    "block_text",
    "block_html",
    "confidence_word",
    "hit_words",
]
