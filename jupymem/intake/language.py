"""Offline, conservative language detection for statements (SPEC 6).

Stored statements are English; anything else is translated on the way in (or
refused when no model is configured). Wrongly calling English "Spanish" would
refuse or needlessly rewrite a person's words, while missing a short foreign
statement merely stores it as written. So the detector is built to err towards
"en":

1. Code is not language. Code spans, URLs, paths and every token that looks
   like an identifier (``_ . / ( )``, digits, camelCase, ALLCAPS) are dropped
   before anything is counted, as are capitalised words inside a sentence
   (names: Los Angeles, São Paulo, De Niro). ``fecha_alta`` or ``df_ventas``
   in an English sentence therefore count for nothing.
2. Only small built-in lists are counted, per language: function words, and
   everyday notebook nouns ("fecha", "cliente") only next to a function word,
   since those are also what columns get called. The language's own letters
   (ñ, ß, ã ...) add a small bonus. Words that are also English (``in``,
   ``also``, ``was``, ``son``, ``car``, ``plus``) are left out of the other
   lists, but for a few ("a", "no", "do") that English counts at half weight.
   Single-word list items ("drop le, la, les, de") and names count for nothing.
3. Another language wins only with at least two hits, a clear lead over the
   English count and a lead over the runner-up; a tie between two other
   languages is "und" (not English, but which is unclear). Too little prose is
   "en": short technical text is never refused.

Non-Latin scripts are recognised by their letters (ja, ko, zh, ru, el ...).
Stdlib only, and cheap: a statement is checked once, when it is recorded.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import NamedTuple

__all__ = ["LANGUAGES", "Scores", "detect", "is_english", "scores"]

# Languages told apart by their words; other scripts get their own codes (ja, ru ...).
LANGUAGES = ("en", "es", "de", "fr", "pt", "it", "nl")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_EN = _words(
    """the of and to in is are was were be been being for on with as by at from this that
    these those it its not no do does did don't doesn't didn't isn't aren't wasn't won't
    can't cannot never always use used using uses when if then than but or we you they he
    she our your their us them i me my should must can could would will may might shall
    only after before because instead into onto each every all any some has have had which
    what who whom whose there here so per via out up down also more most less same other
    over under about between without within rather until while where why how just still
    too very an a both either neither nor once again already yet since through during
    against off own such whether otherwise unless though although else let keep make sure
    need needs first last new old it's we're they're that's there's let's one two
    does get got set put run runs ran see said says like well even much many few"""
)

# Function words: what a sentence in the language cannot do without. Words that
# are also English are left out ("in", "also", "was", "son", "car", "plus"),
# except a few so common that leaving them out loses too much ("a", "no", "do",
# "on", "use"); English counts those at half weight.
_FUNCTION: dict[str, frozenset[str]] = {
    "es": _words(
        """el la los las lo un una unos unas de del al y o que en con por para sobre entre
        hasta desde es son está están estar ser fue hay no sí si se su sus nos este esta
        estos estas ese esa eso esto aquí allí como cuando donde porque pero más menos muy
        ya también siempre nunca antes después sólo cada todos todas toda otro otra mismo
        misma mismos debe deben hace hacer usar usa usad utiliza utilizar usamos hemos ha
        han tiene tienen puede pueden cuál qué según mientras entonces aunque ni nada
        ningún ninguna hacerlo quitar poner cargar guardar eliminar borrar ahora luego a
        borres ejecutes cambies toques mucho mucha muchos muchas tarda"""
    ),
    "pt": _words(
        """o os um uma uns umas de do da dos das no na nos nas ao aos à às pelo pela pelos
        pelas num numa e ou que em com por para sem sobre entre até desde é são está estão
        estar ser foi há não sim se seu sua seus suas este esta estes estas esse essa isso
        isto aqui como quando onde porque mas mais menos muito já também sempre nunca
        antes depois só cada todos todas outro outra mesmo mesma deve devem fazer usar
        utilize utilizar usamos temos tem têm pode podem qual você vocês nós ainda então
        embora nenhum nenhuma nada lhe carregar salvar remover apagar agora a use
        apague rode mude execute"""
    ),
    "fr": _words(
        """le la les un une des du de au aux et ou que qui en dans avec pour sur sans sous
        entre chez est sont été être était ont avons avez fait faut il elle ils elles nous
        vous je ce cette ces cet se sa ses leur leurs ne pas jamais toujours aussi mais
        donc quand lorsque parce si comme très déjà encore avant après chaque tous toutes
        tout toute même autre doit doivent peut peuvent utiliser utilise utilisez charger
        enregistrer supprimer maintenant ensuite ici où y rien aucun aucune non a on"""
    ),
    "de": _words(
        """der die das den dem des ein eine einen einem einer eines und oder aber nicht kein
        keine keinen ist sind wird werden wurde wurden hat haben sein mit von zu zum zur
        auf für bei aus nach vor über unter durch gegen ohne um im ins vom beim dass daß
        weil wenn als wie wo wer ich du er sie es wir ihr sich nur auch noch schon immer
        nie niemals sonst jetzt dann hier dort sehr mehr weniger alle jede jeden jeder muss
        müssen soll sollte sollen darf dürfen kann können bitte diese dieser dieses diesen
        verwenden verwende nutzen benutzen laden speichern löschen zuerst statt damit
        nichts"""
    ),
    "it": _words(
        """il lo la gli le un uno una di del dello della dei degli delle al allo alla ai
        agli alle da dal dalla nel nello nella nei negli nelle sul sulla e ed o che chi per
        con tra fra non è sono essere stato stata ha hanno abbiamo si se ci questo questa
        questi queste quello quella come quando dove perché ma però anche sempre mai già
        ancora prima dopo solo ogni tutti tutte tutto altro altra deve devono usare usa
        utilizzare caricare salvare eliminare adesso ora più niente nessun nessuna a"""
    ),
    "nl": _words(
        """de het een en van dat die niet geen met voor naar bij uit om aan te zijn wordt
        worden werd heeft hebben er ook maar als dan wel nog altijd nooit moet moeten kan
        kunnen mag deze dit wij je ze hij zij gebruik gebruiken laden opslaan verwijderen
        eerst alleen omdat wanneer waar hoe niets"""
    ),
}

# Everyday notebook nouns and adjectives. They are also what columns and values
# get called ("fecha", "cliente", "valor"), so they count only in a sentence
# that already has a function word of the same language.
_CONTENT: dict[str, frozenset[str]] = {
    "es": _words(
        """columna columnas tabla tablas fecha fechas datos fichero ficheros archivo
        archivos cuaderno clave valor valores fila filas cliente clientes ventas mejor peor
        vez veces falla fallo nulos vacío vacía primero nuevo nueva"""
    ),
    "pt": _words(
        """coluna colunas tabela tabelas dados arquivo arquivos caderno chave valor valores
        linha linhas cliente clientes vendas melhor pior vez vezes falha nulos vazio vazia
        primeiro novo nova"""
    ),
    "fr": _words(
        """colonne colonnes tableau fichier fichiers données clé valeur valeurs ligne
        lignes ventes mieux fois erreur échoue vide premier nouveau nouvelle"""
    ),
    "de": _words(
        """spalte spalten tabelle datei dateien daten schlüssel wert werte zeile zeilen
        kunde kunden besser fehler leer neue neuen"""
    ),
    "it": _words(
        """colonna colonne tabella dati chiave valore valori riga righe clienti vendite
        meglio volta errore vuoto nuovo nuova"""
    ),
    "nl": _words(
        """kolom kolommen tabel bestand bestanden gegevens sleutel waarde waarden rij rijen
        klant klanten beter fout leeg nieuwe"""
    ),
}
_OTHER = tuple(_FUNCTION)

# Letters that only some languages write, and how much each says (per word).
_LETTERS: dict[str, dict[str, float]] = {
    **dict.fromkeys("ñ", {"es": 1.0}),
    **dict.fromkeys("ãõ", {"pt": 1.0}),
    **dict.fromkeys("ßäöü", {"de": 1.0}),
    **dict.fromkeys("çêôâ", {"fr": 0.5, "pt": 0.5}),
    **dict.fromkeys("à", {"fr": 0.4, "pt": 0.3, "it": 0.3}),
    **dict.fromkeys("èù", {"fr": 0.5, "it": 0.5}),
    **dict.fromkeys("ìò", {"it": 1.0}),
    **dict.fromkeys("îïûœ", {"fr": 1.0}),
    **dict.fromkeys("ë", {"fr": 0.5, "nl": 0.5}),
    **dict.fromkeys("áíóú", {"es": 0.5, "pt": 0.5}),
    **dict.fromkeys("é", {"es": 0.25, "pt": 0.25, "fr": 0.25, "it": 0.25}),
}
_MAX_LETTER_BONUS = 2.0
_SHARED = _EN & frozenset().union(*_FUNCTION.values())

# French and Italian glue articles and pronouns to the next word: l'index, dell'anno.
_ELISION = {
    "l": ("fr", "it"),
    "d": ("fr", "it"),
    "n": ("fr",),
    "qu": ("fr",),
    "c": ("fr",),
    "j": ("fr",),
    "s": ("fr",),
    "m": ("fr",),
    "t": ("fr",),
    "jusqu": ("fr",),
    "lorsqu": ("fr",),
    "puisqu": ("fr",),
    "dell": ("it",),
    "nell": ("it",),
    "all": ("it",),
    "sull": ("it",),
    "dall": ("it",),
    "un": ("it",),
    "quest": ("it",),
}
_EN_CONTRACTION = re.compile(r"^[a-z]+(?:n't|'s|'re|'ve|'ll|'d|'m)$")

# Scripts recognised by the start of a letter's Unicode name.
_SCRIPTS = (
    ("HIRAGANA", "ja"),
    ("KATAKANA", "ja"),
    ("HANGUL", "ko"),
    ("CJK UNIFIED", "zh"),
    ("CYRILLIC", "ru"),
    ("GREEK", "el"),
    ("ARABIC", "ar"),
    ("HEBREW", "he"),
    ("DEVANAGARI", "hi"),
    ("THAI", "th"),
)

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`?")
_URL = re.compile(r"(?<![\w+.-])[a-zA-Z][\w+.-]{0,30}://\S+|\bwww\.\S+|(?<!\S)[^\s@]+@\S+")
_ET_AL = re.compile(r"\bet\s+al\b\.?", re.IGNORECASE)
# A quoted passage: opened after a space or bracket, closed before one.
_QUOTED = re.compile(
    r"""(?<![\w'"])'[^'\n]{1,200}?'(?![\w'])"""  # not the apostrophe in don't, l'index
    r"""|"[^"\n]{1,200}?"|“[^”\n]{1,200}?”|«[^»\n]{1,200}?»"""
)
_QUOTE_OPENERS = ("'", '"', "“", "«")  # every _QUOTED match starts with one
_EDGE = "'\"“”‘’«»()[]{}<>,.;:!?¿¡…*-–—"
_WORD = re.compile(r"^[^\W\d_]+(?:[-'][^\W\d_]+)*$")
_CAMEL = re.compile(r"[a-z][A-Z]")
_BRACKETED = re.compile(r"^[(\[][^\s)\]]*[)\]][.,;:!?]*$")
_SENTENCE_END = frozenset(".!?:;")
_IDENTIFIER = re.compile(r"(?<![A-Za-z0-9_.])[A-Za-z0-9_.]*[_.0-9][A-Za-z0-9_.]*")
# One Han, kana or Hangul character carries about as much as a short Latin word.
_DENSE = frozenset({"ja", "ko", "zh"})

MIN_HITS = 2  # another language needs at least this many word hits
MIN_WORDS = 2  # fewer prose words than this is "en"


def _script(text: str) -> str | None:
    """A non-Latin script that dominates the letters of ``text``, as a language code.

    ASCII identifiers are removed first: ``customer_id を使う`` is Japanese.
    """
    counts: Counter[str] = Counter()
    latin = 0
    for ch in _IDENTIFIER.sub(" ", text):
        if not ch.isalpha():
            continue
        if ch.isascii():
            latin += 1
            continue
        name = unicodedata.name(ch, "")
        for prefix, code in _SCRIPTS:
            if name.startswith(prefix):
                counts[code] += 1
                break
        else:
            latin += name.startswith("LATIN")
    other = sum(n * (3 if code in _DENSE else 1) for code, n in counts.items())
    if sum(counts.values()) < 2 or other < latin:
        return None
    if counts["ja"]:
        return "ja"  # kana next to kanji is Japanese, not Chinese
    code, _ = counts.most_common(1)[0]
    if code == "ru" and any(ch in text for ch in "єіїґЄІЇҐ"):
        return "uk"
    return code


# Statements reuse a small vocabulary, so what a token or a word says is worked out
# once and remembered (a plain dict, emptied when it grows past this many entries).
_CACHE_LIMIT = 50_000


class _Token(NamedTuple):
    """What one whitespace-separated token says, wherever it stands."""

    ends_sentence: bool
    comma: bool  # ends with a comma: maybe one item of a list of words
    word: str | None  # the lowercased word, or None when the token is not prose
    capitalised: bool
    pronoun_i: bool  # "I": English, and never a name


_TOKENS: dict[str, _Token] = {}


def _token(raw: str) -> _Token:
    found = _TOKENS.get(raw)
    if found is not None:
        return found
    token = raw.replace("’", "'").replace("‘", "'")
    word = token.strip(_EDGE)
    ends = token.rstrip("'\")]")[-1:] in _SENTENCE_END
    prose = not (
        not word
        or _BRACKETED.match(token)  # (de), [es]: a code or a label, not prose
        or not _WORD.match(word)
        or _CAMEL.search(word)
        or (len(word) > 1 and word.isupper())
    )
    found = _Token(
        ends, token.endswith(","), word.lower() if prose else None, prose and word[0].isupper(), word == "I"
    )
    if len(_TOKENS) >= _CACHE_LIMIT:
        _TOKENS.clear()
    _TOKENS[raw] = found
    return found


def _prose(text: str) -> list[tuple[str, bool]]:
    """The words of ``text`` that are prose, each with whether it may count.

    Everything that looks like code is dropped. A word may not count for
    another language when it is capitalised inside a sentence (a name: Los
    Angeles) or is one item of a list of single words ("drop le, la, les, de"
    talks *about* words rather than in them).
    """
    cached = _TOKENS.get
    tokens = [cached(t) or _token(t) for t in text.split()]
    comma = [t.comma for t in tokens]
    out: list[tuple[str, bool]] = []
    sentence_start = True
    for i, token in enumerate(tokens):
        start, sentence_start = sentence_start, token.ends_sentence
        word = token.word
        if word is None:
            continue
        if token.pronoun_i:
            out.append(("i", True))
            continue
        before = i > 0 and comma[i - 1]
        listed = (comma[i] and (before or (i + 1 < len(tokens) and comma[i + 1]))) or (
            before and i > 1 and comma[i - 2]
        )
        name = token.capitalised and not start
        out.append((word, not (name or listed)))
    return out


def _without_quotes(text: str) -> tuple[str, list[tuple[str, bool]]]:
    """``text`` without quoted passages, if enough prose is left outside them,
    and its prose words.

    An English sentence that quotes a Spanish label is English; a statement
    that is one big quotation is judged by the quotation.
    """
    outside, quoted = _QUOTED.subn(" ", text) if any(q in text for q in _QUOTE_OPENERS) else (text, 0)
    if quoted:
        words = _prose(outside)
        if len(words) >= 3:
            return outside, words
    return text, _prose(text)


class Scores(NamedTuple):
    """The evidence ``detect`` decides on, exposed for tests and explanations."""

    english: float  # English function words (half weight for shared ones)
    score: dict[str, float]  # per other language: hits plus letter bonus
    hits: dict[str, int]  # per other language: function words and, with them, content words
    words: int  # prose words left after dropping code


class _Evidence(NamedTuple):
    """What one prose word says: its English weight and, when it may count for
    other languages, (language index, function hit, content hit) triples and
    (language index, weight) letter bonuses. Indexes follow ``_OTHER``."""

    english: float
    hits: tuple[tuple[int, int, int], ...]
    letters: tuple[tuple[int, float], ...]


_EVIDENCE: dict[str, _Evidence] = {}
_INDEX = {lang: i for i, lang in enumerate(_OTHER)}


def _evidence(key: str) -> _Evidence:
    found = _EVIDENCE.get(key)
    if found is not None:
        return found
    word = key
    function = [0] * len(_OTHER)
    if "'" in word and _EN_CONTRACTION.match(word):
        found = _Evidence(1.0, (), ())  # don't, it's: English, and nothing else
    else:
        if "'" in word:
            head, _, word = word.partition("'")
            for lang in _ELISION.get(head, ()):
                function[_INDEX[lang]] += 1
        # A word both languages use ("no", "do", "a") is weak evidence for English.
        english = (0.5 if word in _SHARED else 1.0) if word in _EN else 0.0
        for i, lang in enumerate(_OTHER):
            function[i] += word in _FUNCTION[lang]
        content = [int(word in _CONTENT[lang]) for lang in _OTHER]
        hits = tuple((i, f, c) for i, (f, c) in enumerate(zip(function, content)) if f or c)
        letters = tuple(
            (_INDEX[lang], weight)
            for letter in set(word) & _LETTERS.keys()
            for lang, weight in _LETTERS[letter].items()
        )
        found = _Evidence(english, hits, letters)
    if len(_EVIDENCE) >= _CACHE_LIMIT:
        _EVIDENCE.clear()
    _EVIDENCE[key] = found
    return found


def scores(text: str) -> Scores:
    """Count the evidence in ``text`` (Latin-script prose only; see ``detect``)."""
    # Each pattern runs only where the characters it needs are present: most
    # statements have no code span, URL, quotation or "et al".
    plain = text.isascii()
    if not plain:
        text = unicodedata.normalize("NFC", text)
    if "`" in text:
        text = _FENCE.sub(" ", text)
        text = _INLINE_CODE.sub(" ", text)
    if "://" in text or "www." in text or "@" in text:
        text = _URL.sub(" ", text)
    if not plain or ("et" in (low := text.lower()) and "al" in low):  # beyond ASCII, IGNORECASE has twins
        text = _ET_AL.sub(" ", text)
    inverted = text.count("¿") + text.count("¡")
    text, words = _without_quotes(text)

    english = 0.0
    function = [0] * len(_OTHER)
    content = [0] * len(_OTHER)
    bonus = [0.0] * len(_OTHER)
    cached = _EVIDENCE.get
    for word, counts in words:
        found = cached(word) or _evidence(word)
        english += found.english
        if counts:
            for i, f, c in found.hits:
                function[i] += f
                content[i] += c
            for i, weight in found.letters:
                bonus[i] += weight
    if inverted:
        bonus[_INDEX["es"]] += min(inverted, 2)
    hits = {lang: function[i] + content[i] if function[i] else 0 for i, lang in enumerate(_OTHER)}
    score = {
        lang: hits[lang] + min(bonus[i], _MAX_LETTER_BONUS) if hits[lang] else 0.0
        for i, lang in enumerate(_OTHER)
    }
    return Scores(english, score, hits, len(words))


def detect(text: str) -> str:
    """``"en"``, another language's code, or ``"und"`` when it is clearly not
    English but the language is unclear. Short or code-heavy text is ``"en"``."""
    if not text or not text.strip():
        return "en"
    if not text.isascii():  # ASCII letters are all Latin: no other script to find
        script = _script(_URL.sub(" ", _INLINE_CODE.sub(" ", _FENCE.sub(" ", text))))
        if script:
            return script
    found = scores(text)
    if found.words < MIN_WORDS:
        return "en"
    ranked = sorted(found.score.items(), key=lambda kv: kv[1], reverse=True)
    (best, s1), (_, s2) = ranked[0], ranked[1]
    if found.hits[best] < MIN_HITS:
        return "en"
    # A clear lead over English: every English function word raises the bar twice.
    if s1 < 2 * found.english + MIN_HITS:
        return "en"
    if s1 - s2 < 1:
        return "und"
    return best


def is_english(text: str) -> bool:
    """True unless ``detect`` is sure enough that ``text`` is in another language."""
    return detect(text) == "en"
