"""What a question's words say, read from its text alone: names, attributes, what it asks for.

Rules about wording, apart from any memory: which words of a question name something
(``salient_words``: identifiers, numbers, acronyms, capitalised words that do not start
a sentence), which names a statement writes (``names``), the attribute asked of a name
("Lena Park's *email*", ``attribute_words``), the noun a question asks for ("what is the
*memory limit* ...", ``focus_words``), and the type of answer it wants ("who" wants a
name, "how many" a number: ``wanted_type``, and ``has_type`` for a statement). The
signals of a (query, memory) pair (``signals``) are built from them.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence

from . import lexical

# Chunks of raw text as a person wrote them: words, numbers, identifiers (df_sales, 2.0).
_CHUNK = re.compile(r"[^\W_][\w.\-]*")
_SENTENCE_END = re.compile(r"[.?!¿¡:;\n]\s*$")
# "Lena Park's email", "Pablo's phone number": the attribute asked of a name.
_POSSESSIVE = re.compile(r"\b[A-Z][\w-]*['’]s?\s+([^\W\d_]+)")


def salient_words(text: str, *, english: bool = True) -> list[str]:
    """The folded words of ``text`` that name something: parts of identifiers, numbers
    and acronyms; in English also capitalised words that do not start a sentence (other
    languages capitalise nouns)."""
    out: dict[str, None] = {}
    chunks = list(_CHUNK.finditer(text))
    cased = not _case_says_nothing([m.group() for m in chunks])
    for i, m in enumerate(chunks):
        chunk = m.group().rstrip(".-")
        if not chunk:
            continue
        starts = i == 0 or bool(_SENTENCE_END.search(text[max(0, m.start() - 3) : m.start()]))
        named = any(c.isdigit() for c in chunk) or _identifier(chunk) or (cased and len(chunk) > 1 and chunk.isupper())
        if english and cased and not named:
            named = chunk[0].isupper() and not starts and chunk != "s"
        if named:
            for part in lexical.tokens(chunk):
                if part not in lexical.STOPWORDS:
                    out.setdefault(part, None)
    return list(out)


def capitalised(text: str) -> frozenset[str]:
    """The folded words ``text`` writes with a capital and then small letters ("Dublin", not
    "NEAR" or "PSI": capitals throughout may be an acronym memory spells out, or emphasis)."""
    return frozenset(lexical.fold(w) for w in _LETTERS.findall(text) if w[0].isupper() and not w.isupper())


_LETTERS = re.compile(r"[^\W\d_]+")


def _case_says_nothing(chunks: Sequence[str]) -> bool:
    """A query in Title Case or in capitals ("Who Owns The Demand Planning Notebooks?"):
    nearly every word is capitalised, so capitals mark no name. Its names are then the
    ones memory writes (``with_names``), its identifiers and its numbers."""
    words = [c for c in chunks[1:] if c.isalpha() and len(c) > 1 and c.lower() not in _MINOR]
    return len(words) >= 2 and sum(c[0].isupper() for c in words) >= 0.75 * len(words)


# The short words a title leaves in lower case ("Impact of Diet on the Risk of Cancer").
_MINOR = frozenset("a an the of in on at to for by and or but nor as from with vs via into onto per".split())


def attribute_words(text: str) -> list[str]:
    """The attribute asked of a name: "Lena Park's *email*", "Pablo's *phone* number"."""
    words = (lexical.fold(m.group(1)) for m in _POSSESSIVE.finditer(text))
    return [w for w in words if w not in lexical.STOPWORDS]


def names(
    statement: str, wanted: Iterable[str], partners: dict[str, set[str]] | None = None
) -> dict[str, set[int]]:
    """Which of ``wanted`` (a query's folded words) ``statement`` writes as names:
    capitalised where no sentence starts ("Park", "Optuna"), a sentence's first word when
    a name follows it ("Lena Park"), and acronyms ("GPU"). Each maps to the sides (-1, +1)
    on which the memory writes another name beside it: "lena" -> {+1}, "park" -> {-1}.
    ``partners``, when given, receives the names written just before each, folded: "park" ->
    {"lena"} (a family name's given name; "Huguenot *Memorial* Bridge" gives "huguenot" none).
    Only the wanted words are looked for (a 250-word abstract is read in C, not word by
    word)."""
    plain = statement if statement.isascii() else statement.translate(_unaccented())
    # None: a letter whose lower case is longer, so compare chunk by chunk.
    lower: str | None = plain.lower() if len(plain.lower()) == len(statement) else None
    out: dict[str, set[int]] = {}
    for word in wanted:
        for at, end in _occurrences(statement, lower, word):
            sides = _name_sides(statement, at, end)
            if sides is not None:
                out.setdefault(word, set()).update(sides)
                if partners is not None and -1 in sides:
                    partners.setdefault(word, set()).update(_beside(statement, at, end, {-1}))
    return out


@functools.lru_cache(maxsize=1)
def _unaccented() -> dict[int, int]:
    """Latin letters with diacritics -> the letter without them, one character for one, so
    that positions stay those of the statement ("José" is found as "jose")."""
    table = {}
    for code in range(0xC0, 0x250):
        base = unicodedata.normalize("NFKD", chr(code))[0]
        if base != chr(code) and base.isascii() and base.isalpha():
            table[code] = ord(base)
    return table


def _occurrences(statement: str, lower: str | None, word: str) -> Iterable[tuple[int, int]]:
    """Where ``statement`` holds ``word`` capitalised, as a whole chunk: (start, end)."""
    if lower is None:
        for m in _CHUNK.finditer(statement):
            chunk = m.group().rstrip(".-")
            if chunk[0].isupper() and lexical.fold(chunk) == word:
                yield m.start(), m.start() + len(chunk)
        return
    at = lower.find(word)
    while at >= 0:
        end = at + len(word)
        before = statement[at - 1] if at else " "
        after = statement[end : end + 2]
        if statement[at].isupper():  # a name is capitalised: most occurrences stop here
            joined = before.isalnum() or before == "_" or (after[:1] in (".", "-") and after[1:].isalnum())
            if not joined and not (after[:1].isalnum() or after[:1] == "_"):
                yield at, end
        at = lower.find(word, end)


_NEXT_CHUNK = re.compile(r"\s+([^\W_][\w.\-]*)")
_LAST_CHUNK = re.compile(r"([^\W_][\w.\-]*)\s+\Z")


def _capital(chunk: str) -> bool:
    return len(chunk) > 1 and chunk[0].isupper() and chunk.isalpha() and lexical.fold(chunk) not in lexical.STOPWORDS


def _beside(statement: str, at: int, end: int, sides: set[int]) -> set[str]:
    """The names written on ``sides`` of the name at ``at:end``, folded."""
    out = set()
    if 1 in sides and (nxt := _NEXT_CHUNK.match(statement, end)) is not None:
        out.add(lexical.fold(nxt.group(1).rstrip(".-")))
    if -1 in sides and (last := _LAST_CHUNK.search(statement, max(0, at - 80), at)) is not None:
        out.add(lexical.fold(last.group(1)))
    return out


def _name_sides(statement: str, at: int, end: int) -> set[int] | None:
    """The sides of the chunk at ``at:end`` on which a name stands, or None if it is no name."""
    chunk = statement[at:end]
    if not _capital(chunk):
        return None
    nxt = _NEXT_CHUNK.match(statement, end)
    next_name = nxt is not None and _capital(nxt.group(1).rstrip(".-"))
    starts = at == 0 or bool(_SENTENCE_END.search(statement[max(0, at - 3) : at]))
    if starts and not chunk.isupper() and not next_name:
        return None  # a sentence's first word, and no name after it
    last = _LAST_CHUNK.search(statement, max(0, at - 80), at)
    prev_name = last is not None and last.group(1) == last.group(1).rstrip(".-") and _capital(last.group(1))
    return {side for side, beside in ((-1, prev_name), (1, next_name)) if beside}


# "lena's email", "Lena's email": a possessive, whatever the case; its owner must be a name
# memory knows (``with_names``).
_POSSESSIVE_ANY = re.compile(r"\b([^\W\d_][\w-]*)['’]s?\s+([^\W\d_]+)", re.IGNORECASE)


# What a question asks for by name: "what is the *memory limit* of ...", "which *version*
# of Optuna", "what *salt* does ... use", "how many *agents* ...". After "what", the words
# must be followed by a preposition or an auxiliary verb, so a verb is not taken for a noun
# ("what happens with ..."); "which" and "how many" are always followed by their noun.
_AUX = r"(?:of|for|in|on|at|does|do|did|is|are|was|were|should|can|could|will|would|has|have)\b"
_WORD_ = r"[^\W\d_][\w-]*"
_FOCUS_STRICT = re.compile(
    rf"^\W*(?:what|which)(?:['’]s|\s+(?:is|are|was|were))?\s+(?:the\s+|our\s+|an?\s+)?((?:{_WORD_}\s+){{1,2}}?){_AUX}",
    re.IGNORECASE,
)
_FOCUS_LOOSE = re.compile(rf"^\W*(?:which|how\s+many)\s+({_WORD_})\b", re.IGNORECASE)


def focus_words(text: str) -> list[str]:
    """The noun a question asks for (with its modifier): "what is the memory limit of the
    shared kernel?" -> memory, limit; "which version of Optuna" -> version."""
    m = _FOCUS_STRICT.match(text) or _FOCUS_LOOSE.match(text)
    if not m:
        return []
    return [w for w in lexical.tokens(m.group(1)) if w not in lexical.STOPWORDS]


def _identifier(chunk: str) -> bool:
    inner = chunk.strip("._-")
    if "_" in inner or ("." in inner and not inner.replace(".", "").isdigit()):
        return True
    return any(c.isupper() for c in inner[1:]) and any(c.islower() for c in inner)


# What a question asks for, and the words of a memory that can answer it.
_WANTS_NAME = re.compile(r"^\W*(?:who|whom|whose)\b", re.IGNORECASE)
_WANTS_AMOUNT = re.compile(r"^\W*how\s+(?:many|much|long|often|far|big|large|old)\b", re.IGNORECASE)
# "when was/is/does ..." asks for a time; "when should/can we ..." asks for a condition.
_WANTS_TIME = re.compile(
    r"^\W*(?:when\s+(?:was|were|did|will|is|does|do)\b|(?:what|which)\s+(?:time|day|date|weekday)\b)",
    re.IGNORECASE,
)
TIME_WORDS = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays
    fridays saturdays sundays weekend weekends january february march april may june july august september
    october november december daily weekly monthly nightly hourly quarterly yearly annually morning
    afternoon evening night midnight noon today yesterday tomorrow day days week weeks month months year
    years quarter hour hours minute minutes every""".split()
)
# Closed classes of words: two members of one in the same place contradict each other ("the
# *monthly* sales forecast" / "weekly sales forecasts"), though their vectors call them close.
_CLASSES = tuple(frozenset(c.split()) for c in (
    "hourly daily nightly weekly biweekly fortnightly monthly quarterly yearly annual annually",
    "monday tuesday wednesday thursday friday saturday sunday",
    "january february march april june july august september october november december",
))


def rival(a: str, b: str) -> bool:
    """Are ``a`` and ``b`` (folded words) two different members of one closed class (periods,
    weekdays, months; a plural counts as its singular)?"""
    a, b = (w[:-1] if w.endswith("s") and w[:-1] in _ANY_CLASS else w for w in (a, b))
    return a != b and any(a in c and b in c for c in _CLASSES)


_ANY_CLASS = frozenset().union(*_CLASSES)
_NUMBER = re.compile(r"(?<![\w.])\d[\d,.]*%?(?![\w.])")
_AMOUNT_WORDS = frozenset(
    """one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty
    hundred thousand million billion dozen half twice double every each daily weekly monthly nightly hourly
    quarterly yearly annually minute minutes hour hours day days week weeks month months year years""".split()
)


# A question whose focus is one of these asks for a value of that kind: "which *version*
# of Optuna" wants a version number, "what is the *cost* of ..." a number.
_VALUE_NOUNS = {
    "version": "version",
    **dict.fromkeys(
        """cost costs price prices budget salary size accuracy precision recall lift wape mape rmse auc
        percentage share count limit latency uptime port""".split(),
        "amount",
    ),
}
_VERSION = re.compile(r"\d+\.\d+|==|\bv\d")


def wanted_type(text: str) -> str | None:
    """"name" for who-questions, "time" for when-was questions, "amount" for how
    many/much/long/often or a question about a cost, a size, an accuracy ..., "version"
    for a question about a version; else None."""
    if _WANTS_NAME.match(text):
        return "name"
    if _WANTS_AMOUNT.match(text):
        return "amount"
    if _WANTS_TIME.match(text):
        return "time"
    for word in focus_words(text):
        if word in _VALUE_NOUNS:
            return _VALUE_NOUNS[word]
    return None


_HOW_MANY = re.compile(r"^\W*how\s+many\s+(.+)", re.IGNORECASE | re.DOTALL)
# Words that count: a digit, or a number written out.
_CARDINALS = frozenset(
    """one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
    seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand
    million billion dozen dozens hundreds thousands millions several couple few twice""".split()
)
# The words after a number that say what it counts ("200 hand-labelled *tickets*").
COUNTED_SPAN = 3


def counted_words(text: str) -> tuple[str, ...]:
    """What "how many ..." counts: the words after it, up to the first stop word ("how many
    *stores* have a catchment?", "how many *new hires* joined?"), at most three; () for
    any other question."""
    m = _HOW_MANY.match(text)
    if m is None:
        return ()
    out: list[str] = []
    for word in lexical.tokens(m.group(1)[:200]):
        if word in lexical.STOPWORDS or word.isdigit():
            if out:
                break
            continue
        out.append(word)
        if len(out) == 3:
            break
    return tuple(out)


def counted_after(tokens: Sequence[str]) -> list[str]:
    """The words a statement's numbers count: the ``COUNTED_SPAN`` words after each number
    that are neither numbers nor stop words ("52 *weeks* of *history*", "3.18 million *Indian
    Americans*"), and the word just before a number when only stop words stand between
    ("*stores*: 1,200", "*stores* are 1,200")."""
    out: list[str] = []
    for i, word in enumerate(tokens):
        if not (word.isdigit() or word in _CARDINALS):
            continue
        span = 0
        for w in tokens[i + 1 : i + 12]:
            if w.isdigit() or w in _CARDINALS or w in lexical.STOPWORDS:
                continue
            out.append(w)
            span += 1
            if span == COUNTED_SPAN:
                break
        j = i - 1
        while j >= 0 and (tokens[j].isdigit() or tokens[j] in lexical.STOPWORDS) and i - j <= 3:
            j -= 1
        if j >= 0 and i - j <= 3 and tokens[j] not in _CARDINALS:
            out.append(tokens[j])
    return list(dict.fromkeys(out))


# Words that say who without a name ("Jonas ... is the *person* to ask", "the platform
# *team*"): a memory holding one answers "who ..." for the verdict's reading (``names_someone``),
# though ``has_type`` (a fitted model's signal) reads names alone. Not "owner", "lead",
# "maintainer": a memory writes those of someone it does not name ("announced with the
# *owner's* name"), and a question asks who they are.
_ROLES = frozenset(
    "person people team teams group groups department colleague colleagues expert experts contact".split()
)


def names_someone(statement: str) -> bool:
    """Whether ``statement`` says who: a name (``has_type``) or a role ("the *person* to ask")."""
    return has_type(statement, "name") or any(w in _ROLES for w in lexical.tokens(statement))


# A "how many" question is read for what it counts only when one of the counted words is at
# least this specific (``Model2VecEmbedder.specificity``): "how many *people*", "how many
# *times*" (0.52, 0.46) are answered by a count of anything of their kind ("5,000 customers").
COUNTED_SPECIFIC = 0.6


def counted_closeness(
    asked: Sequence[str], statement: str, near: Callable[[Sequence[str], Sequence[str]], Sequence[float]] | None,
    specificity: Callable[[Sequence[str]], Sequence[float]] | None,
) -> float | None:
    """How close what ``statement``'s numbers count (``counted_after``) comes to what "how
    many ..." asks to count (``asked``, ``counted_words``): 1.0 for the same word or its
    stem, else the nearest in meaning by ``near`` (the word vectors' best cosine; 0 without
    them); None when every asked word is too generic to read (``COUNTED_SPECIFIC``)."""
    if specificity is not None and max(specificity(list(asked))) < COUNTED_SPECIFIC:
        return None
    counted = counted_after(lexical.tokens(statement))
    if not counted:
        return 0.0
    stems = {lexical.stem(w) for w in counted} | set(counted)
    if any(w in stems or lexical.stem(w) in stems for w in asked):
        return 1.0
    return max(near(list(asked), counted)) if near is not None else 0.0


# A question reported, not answered: "Someone *asked when* the model is retrained, in thread
# 7", "Nobody knows who owns it." From the asking verb to the end of its sentence; a plain
# "when" clause ("retrain when the AUC drops below 0.7") is an answer and stays. Direct
# questions stay too: in conversation turns "...a baseball game next Sunday, want to join?"
# carries the answer (on the suites, taking out the asking verbs' clauses changed no gold
# memory's answer type; taking out question sentences changed four of LoCoMo's 481).
_ASKING = re.compile(
    r"\b(?:ask(?:s|ed|ing)?|wonder(?:s|ed|ing)?|unsure|not sure|unclear|no one knows|nobody knows|"
    r"(?:do|does|did)n['\u2019]?t know)\s+(?:about\s+)?"
    r"(?:when|who|whom|whose|what|which|where|why|how|whether|if)\b[^.;!?\n]*[.;!?]?",
    re.IGNORECASE,
)


_ASKING_WORDS = frozenset(
    "ask asks asked asking wonder wonders wondered wondering unsure sure unclear know knows".split()
)


def not_asking(statement: str) -> str:
    """``statement`` without the questions it reports someone asked (``_ASKING``): what it
    says itself, for ``has_type``."""
    # The pattern takes ~0.2 ms over an abstract, and a search reads ten: first the words
    # it needs, in a few microseconds (an asking verb stands before a space).
    if _ASKING_WORDS.isdisjoint(statement.lower().split()):
        return statement
    return _ASKING.sub(" ", statement)


def has_type(statement: str, wanted: str) -> bool:
    if wanted == "version":
        return bool(_VERSION.search(statement))
    if wanted in ("amount", "time"):
        words = _AMOUNT_WORDS if wanted == "amount" else TIME_WORDS
        return bool(_NUMBER.search(statement)) or any(w in words for w in lexical.tokens(statement))
    chunks = list(_CHUNK.finditer(statement))
    for i, m in enumerate(chunks):
        chunk = m.group()
        starts = i == 0 or bool(_SENTENCE_END.search(statement[max(0, m.start() - 3) : m.start()]))
        if chunk[0].isupper() and not starts and not chunk.isupper() and not _identifier(chunk):
            return True
        if chunk.lower() in ("team", "teams"):
            return True
    return False
