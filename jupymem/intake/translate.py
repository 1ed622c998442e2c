"""The language policy (SPEC 6): stored memory is English, so every assistant reads it the same way.

A statement in another language is translated on the way in, by the project's translator
(a face that has a model sets one) or by ``JUPYMEM_MODEL``'s; its original words are kept
beside the translation. ``JUPYMEM_LANGUAGE=source`` stores statements as written. Where
nothing can translate, the statement is refused before anything is written, and before a
face creates memory for it (``check_first_record``).

litellm is imported only when a statement is translated (``llm.translator_for``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..config import Settings
from ..errors import LanguageRefused
from . import capture, language

_LANGUAGE_NAMES = {"es": "Spanish", "de": "German", "fr": "French", "pt": "Portuguese", "it": "Italian", "nl": "Dutch"}


def needs_translation(text: str, settings: Settings, translator: Any = None) -> bool:
    """True when ``text`` must be translated before it is stored; raises
    ``LanguageRefused`` when it would need translating and nothing can."""
    if settings.language == "source" or language.is_english(text):
        return False
    if translator is None and not settings.model:
        lang = language.detect(text)
        raise LanguageRefused(
            f"This statement looks like {_LANGUAGE_NAMES.get(lang, 'another language')}, and stored memory is "
            "English so every assistant reads it the same way. Set JUPYMEM_MODEL to a litellm model to "
            "translate it on the way in (your words are kept as its quote), or set JUPYMEM_LANGUAGE=source "
            "to store statements as written."
        )
    return True


def check_first_record(statement: str | bytes, settings: Settings) -> None:
    """Refuse what ``remember`` would refuse *before* a face initializes memory for
    it, so a refused first statement leaves no empty project behind."""
    needs_translation(capture.check_statement(statement), settings)


def model_translator(settings: Settings) -> Callable[[str], str] | None:
    """``JUPYMEM_MODEL``'s translator, or None without a model."""
    if not settings.model:
        return None
    from .llm import translator_for  # litellm itself is imported only when translating

    return translator_for(settings)


def english(text: str, settings: Settings, translator: Any = None) -> tuple[str, str | None]:
    """(statement to store, original words or None) for a clean statement under the policy;
    ``translator`` is the project's own, else the model's is used. Raises ``LanguageRefused``
    when the statement needs translating and nothing can, and what ``check_statement``
    raises for a translation that is no statement."""
    translator = translator or model_translator(settings)
    if not needs_translation(text, settings, translator):
        return text, None
    return capture.check_statement(translator(text)), text
