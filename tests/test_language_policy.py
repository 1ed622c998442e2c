"""SPEC 6: stored memory is English; other languages are translated once on the way in.

Without a model a non-English statement is refused with a message naming
JUPYMEM_MODEL and JUPYMEM_LANGUAGE=source; with one it is translated (litellm's
``mock_response`` or the loopback fake server stand in for the model), the
original is kept, and identity stays keyed on the original words.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

import jupymem
from jupymem.assistants import tools
from jupymem.assistants.assistant import ask_turn
from jupymem.config import Settings
from jupymem.errors import LanguageRefused, ModelError
from jupymem.intake import capture, llm
from jupymem.models import Provenance

SPANISH = "Usa siempre la columna fecha_alta para las fechas de alta de los clientes."
ENGLISH = "Always use the fecha_alta column for the customers' sign-up dates."
OTHERS = {
    "de": "Wir verwenden immer die Spalte kunden_id und niemals die E-Mail für die Verknüpfung.",
    "fr": "Nous utilisons toujours la colonne client_id et jamais l'adresse e-mail pour les jointures.",
    "pt": "Usamos sempre a coluna cliente_id e nunca o e-mail para juntar as tabelas de vendas.",
}


def _never(text: str) -> str:
    raise AssertionError("the translator must not be called for this statement")


def test_refused_without_a_model(repo: Path, settings: Settings):
    proj = jupymem.init(repo)
    assert llm.translator_for(settings) is None
    for text in (SPANISH, *OTHERS.values()):
        with pytest.raises(LanguageRefused) as info:
            proj.remember(text, kind="constraint")
        assert "JUPYMEM_MODEL" in info.value.message and "JUPYMEM_LANGUAGE=source" in info.value.message
    assert proj.list() == []


def test_english_full_of_identifiers_is_never_translated(repo: Path, settings: Settings):
    proj = jupymem.init(repo)
    proj.translator = _never
    m = proj.remember("Join df_ventas to df_clientes on cliente_id; fecha_alta is UTC.", kind="decision")
    assert m.original is None


def test_translated_with_a_model_keeping_the_original(repo: Path, settings: Settings):
    proj = jupymem.init(repo)
    proj.translator = llm.translator_for(settings.with_(model="openai/fake"), mock_response=ENGLISH)
    m = proj.remember(SPANISH, kind="constraint")
    assert m.statement == ENGLISH and m.original == SPANISH
    assert m.id == capture.memory_id(SPANISH), "identity is keyed on the words as said"
    # Saying the same Spanish sentence again is the same memory, even if the model words it differently.
    proj.translator = llm.translator_for(settings.with_(model="openai/fake"), mock_response="Use fecha_alta always.")
    again = proj.remember(SPANISH, kind="constraint")
    assert again.id == m.id and again.statement == ENGLISH
    assert len(proj.list()) == 1
    assert ENGLISH in proj.block().text and SPANISH not in proj.block().text
    # The original words stay searchable.
    assert proj.search("fechas de alta de los clientes").hits[0].memory.id == m.id


def test_translator_follows_jupymem_model(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("JUPYMEM_MODEL", "openai/fake")
    translate = llm.translator_for(Settings.from_env(), mock_response="  Translation: \"Hello.\" ")
    assert translate is not None and translate("Hola.") == "Hello."
    monkeypatch.delenv("JUPYMEM_MODEL")
    assert llm.translator_for(Settings.from_env()) is None


def test_an_empty_translation_is_an_error(repo: Path, settings: Settings):
    proj = jupymem.init(repo)
    proj.translator = llm.translator_for(settings.with_(model="openai/fake"), mock_response="   ")
    with pytest.raises(ModelError, match="no translation"):
        proj.remember(SPANISH)
    assert proj.list() == []


def test_source_language_stores_as_written(repo: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("JUPYMEM_LANGUAGE", "source")
    settings = Settings.from_env()
    proj = jupymem.init(repo, settings=settings)
    proj.translator = _never
    m = proj.remember(SPANISH, kind="constraint")
    assert m.statement == SPANISH and m.original is None


def test_a_refused_declaration_starts_no_memory(repo: Path, settings: Settings):
    ctx = tools.ToolContext(path=repo, settings=settings, prompt="", provenance=Provenance(recorder="person"))
    with pytest.raises(LanguageRefused, match="JUPYMEM_LANGUAGE=source"):
        tools.record_declaration(ctx, "recuerda que " + SPANISH)
    assert jupymem.project(repo) is None


def test_recuerda_through_ask_is_translated_on_the_wire(repo: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    prompt = "recuerda que la columna fecha_alta está en UTC"
    with FakeOpenAI() as fake:
        fake.say("Anotado.", "The fecha_alta column is in UTC.")
        turn = ask_turn(prompt, model="openai/fake", path=repo, settings=settings, api_base=fake.url)
        chat, translation = fake.requests
    assert turn.answer == "Anotado."
    assert translation["messages"][0]["content"] == llm.TRANSLATE_PROMPT
    assert translation["messages"][1]["content"] == "La columna fecha_alta está en UTC"
    m = turn.declared
    assert m is not None and m.statement == "The fecha_alta column is in UTC."
    assert m.original == "La columna fecha_alta está en UTC" and m.provenance.quote == prompt
    assert m.id == capture.memory_id("La columna fecha_alta está en UTC")
