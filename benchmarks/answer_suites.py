"""The questions answerability is fitted and measured on: each family's suites, derived suites and generated negatives.

Shared by ``fit_answerability.py`` (the fitted models) and ``verdict_suites.py`` (the verdict's
reading, measured per family). A family is a suite and everything derived from it
(``family_suites``: its small projects merged into one, its notes padded into documents, its
claims inside prompts); ``plan_family`` lists what one family's collection job asks, and of
which project: the suites' own questions (capped per kind by a hash of the query id), each
answerable question asked in other scopes (``evaluate.cross_scope_negatives``), questions
about the people and identifiers our own suites name with invented names and attributes no
memory states (``generated_queries``), SciFact's claims asked of the other families'
projects and our questions asked of SciFact's abstracts.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from jupymem.measure.evaluate import Query, Suite, cross_scope_negatives
from jupymem.retrieval import answerable

ROOT = Path(__file__).resolve().parents[1]
OTHER_SCOPES = 2  # each answerable query asked in this many other scopes of its suite


def _hashed(key: str) -> int:
    import hashlib

    return int(hashlib.sha1(key.encode()).hexdigest(), 16)


# -- generated questions about the entities memory names -------------------------------------

# Two capitalised words, as person names are written ("Lena Park", "Priya Raman").
_PERSON = re.compile(r"(?<![Tt]he )\b([A-Z][a-zà-ÿ]+) ([A-Z][a-zà-ÿ]+)\b")
_NOT_NAMES = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july august "
    "september october november december easter christmas".split()
)
ATTRIBUTES = ("email address", "phone number", "office", "manager", "start date", "Slack handle", "job title",
              "home town")
FIRST = ("Mara", "Tobias", "Ines", "Oskar", "Yuki", "Rafael", "Freya", "Dmitri", "Leila", "Hugo")
LAST = ("Lindgren", "Okafor", "Brandt", "Moreau", "Haddad", "Castillo", "Novak", "Achterberg", "Sandoval", "Kowalczyk")
INVENTED = ("vendor", "ledger", "shipment", "voucher", "tariff", "parcel", "quota", "refill", "courier", "rebate")
IDENTIFIERS_PER_SCOPE = 4


def _pick(options: tuple[str, ...], key: str, avoid: str) -> str:
    """A deterministic choice that does not occur in ``avoid`` (the scope's text)."""
    ranked = sorted(options, key=lambda o: _hashed(o + key))
    return next((o for o in ranked if o.lower() not in avoid), ranked[0])


def generated_queries(suite: Suite) -> list[Query]:
    """Questions about the people and identifiers each scope's memories name: "what does
    Lena Park do?" (answerable), "what is Lena Park's phone number?" (an attribute memory
    never states), "what does Lena Brandt do?" and "what is df_voucher?" (invented names
    that share a word with real ones)."""
    from jupymem.retrieval.fuzzy import identifiers
    from jupymem.retrieval.lexical import STOPWORDS, fold

    out = []
    for scope, memories in sorted(suite.memories.items()):
        text = " ".join(m["text"] for m in memories).lower()
        people: dict[str, list[str]] = defaultdict(list)
        idents: dict[str, list[str]] = defaultdict(list)
        for m in memories:
            for found in _PERSON.finditer(m["text"]):
                first, last = found.groups()
                if not {first.lower(), last.lower()} & (STOPWORDS | _NOT_NAMES):
                    people[found.group(0)].append(m["id"])
            for ident in identifiers(m["text"]):
                if "_" in ident and not ident.startswith(tuple("0123456789")):
                    idents[ident].append(m["id"])
        for person, ids in sorted(people.items()):
            first, last = person.split()
            key = f"{scope}:{person}"
            out.append(Query(f"gen:{key}:does", f"what does {person} do?", tuple(ids), scope, "generated-entity"))
            for n, attr in enumerate(sorted(ATTRIBUTES, key=lambda a: _hashed(a + key))[:2]):
                if attr.lower() not in text:
                    out.append(Query(f"gen:{key}:attr{n}", f"what is {person}'s {attr}?", (), scope,
                                     "generated-absent-attribute", False))
            for n, other in enumerate((f"{first} {_pick(LAST, key, text)}", f"{_pick(FIRST, key, text)} {last}")):
                out.append(Query(f"gen:{key}:swap{n}", f"what does {other} do?", (), scope,
                                 "generated-swapped-entity", False))
        for ident in sorted(idents, key=lambda i: _hashed(scope + i))[:IDENTIFIERS_PER_SCOPE]:
            parts = ident.split("_")
            at = max(range(len(parts)), key=lambda i: (len(parts[i]) if parts[i].isalpha() else 0, -i))
            swapped = "_".join(_pick(INVENTED, ident, text) if i == at else p for i, p in enumerate(parts))
            key = f"{scope}:{ident}"
            out.append(Query(f"gen:{key}:what", f"what is {ident}?", tuple(idents[ident]), scope, "generated-entity"))
            if fold(swapped) not in text:
                out.append(Query(f"gen:{key}:swap", f"what is {swapped}?", (), scope, "generated-swapped-entity", False))
    return out


def merged(suite: Suite) -> Suite:
    """Every scope of ``suite`` in one project: the small projects together make one of
    about 80 statements, so the model for larger projects' statements learns from their
    questions too (the gold suite alone has few). Its queries keep their split: each is
    split by the id of the query it was made from."""
    out = Suite()
    for memories in suite.memories.values():
        out.memories["merged"].extend(memories)
    out.queries = [Query(f"merged:{q.id}", q.query, q.relevant, "merged", q.category, False, q.id)
                   for q in suite.queries]
    return out


def padded(suite: Suite) -> Suite:
    """``suite`` with every memory followed by others of its project until it is a document
    (``DOCUMENT_CHARS``): long notes, so that the model for documents does not learn
    SciFact's abstracts alone. The padding holds no answer to an unanswerable question (its
    project had none), so the labels stand; queries keep their ids, hence their split."""
    out = Suite()
    for scope, memories in suite.memories.items():
        for m in memories:
            others = sorted((o for o in memories if o["id"] != m["id"]), key=lambda o: _hashed(m["id"] + o["id"]))
            text, i = m["text"], 0
            while len(text) < answerable.DOCUMENT_CHARS + 20 and i < len(others):
                text, i = f"{text} {others[i]['text']}", i + 1
            out.memories[scope].append({**m, "text": text})
    out.queries = list(suite.queries)
    return out


# Claims asked inside a prompt, as an assistant's whole prompt is a query too: without
# them the model for documents, fitted on bare claims, abstained on prompts it should
# answer. Unlike the wording of ``bench_lexical_100k.py``'s prompt, which measures it.
WRAPPERS = (
    ("Before I send this to my supervisor, can you check the following statement against the papers we collected?",
     "Tell me which abstracts are relevant."),
    ("Quick question while I review a manuscript: the authors state that", "Is there anything in our notes that backs this up?"),
    ("We are preparing a grant renewal and one of the reviewers wrote the following.",
     "Find the evidence we have for or against it, please."),
    ("For the journal club on Friday I need background on this:", "What do we know about it, and from which studies?"),
    ("My colleague insists on this point:", "Is that right, and where exactly is it shown?"),
    ("Summarize what our reading list says about the following claim.", "Keep it short and cite the sources."),
)


def wrapped(text: str, key: str) -> str:
    # Not by _hashed(key) alone: the split is that hash modulo 3, and would pick the wrappers.
    opener, closer = WRAPPERS[_hashed("wrapper:" + key) % len(WRAPPERS)]
    return f"{opener} {text} {closer}"


def prompted(suite: Suite) -> Suite:
    """``suite``'s memories, its queries each inside a prompt (``WRAPPERS``)."""
    out = Suite()
    out.memories = suite.memories
    out.queries = [Query(f"prompt:{q.id}", wrapped(q.query, q.id), q.relevant, q.scope, "prompt", False, q.id)
                   for q in suite.queries]
    return out


FAMILIES = {
    "gold": ROOT / "tests" / "gold" / "notebook_memory.gold.jsonl",
    "small": ROOT / "tests" / "gold" / "small_projects.gold.jsonl",
    "heldout": ROOT / "tests" / "gold" / "heldout.gold.jsonl",
    "paraphrase": ROOT / "benchmarks" / "suites" / "own" / "paraphrase.gold.jsonl",
    "scifact": ROOT.parent / "shared" / "data" / "scifact-train.gold.jsonl",
    "locomo": Path("/work/suites/locomo10.gold.jsonl"),
    "nfcorpus": Path("/work/suites/nfcorpus-test.gold.jsonl"),
    "cisi": Path("/work/suites/cisi.gold.jsonl"),
    "cranfield": Path("/work/suites/cranfield.gold.jsonl"),
}
OWN = ("gold", "small", "heldout", "paraphrase")  # written by us: generated entity questions too
# The explain mode of each fitted mode ("hybrid" is the static tier's, under its old name).
EXPLAIN_MODE = {"lexical": "lexical", "hybrid": "static", "transformer": "transformer"}
# To bound collection time: at most this many of a suite's answerable queries, and of each
# kind of its unanswerable ones (by a hash of the query id it was made from).
CAP_ANSWERABLE = 250
CAP_NEGATIVE = 120
CAP_DERIVED = 120  # answerable queries of a derived suite (prompts, padded notes)
# SciFact claims asked of each scope of another family's projects (more in one big project).
CLAIMS_PER_SCOPE = {"one": 40, "many": 10}
OURS_IN_SCIFACT = 60  # each of our families' answerable questions asked of SciFact (+ half in prompts)
NO_CLAIMS = ("nfcorpus",)  # medical too: SciFact's claims may be answered there


def family_suites(family: str, suite: Suite) -> dict[str, Suite]:
    """A family's suite and the ones derived from it."""
    out = {family: suite}
    if family in ("small", "heldout"):
        out[f"{family}-merged"] = merged(suite)
    if family == "scifact":
        out["scifact-prompts"] = prompted(suite)
    if family == "gold":
        out["gold-long"] = padded(suite)
    if family == "small":
        out["small-merged-long"] = padded(out["small-merged"])
    return out


def _capped(queries: list[Query], cap: int) -> list[Query]:
    if len(queries) <= cap:
        return queries
    keep = set(map(id, sorted(queries, key=lambda q: _hashed("cap:" + (q.origin or q.id)))[:cap]))
    return [q for q in queries if id(q) in keep]


def kind_of(category: str, answerable_: bool) -> str:
    if answerable_:
        return "answerable"
    c = category or ""
    for k in ("absent-entity", "absent-attribute", "swapped-entity", "cross-scope", "cross-suite", "adversarial"):
        if c.endswith(k):
            return k
    if c.endswith("abstain") or c == "off-topic":
        return "off-topic"
    return c or "other"


def plan_family(family: str, loaded: dict[str, Suite]) -> dict[tuple[str, str], list[tuple[str, Query]]]:
    """(suite, scope) -> [(family the row counts for, query)] for one family's collection
    job: its suites' queries (capped), cross-scope and generated negatives, SciFact's
    claims asked of its projects (SciFact's family), and for SciFact our questions asked of
    its abstracts (the family of each question)."""
    suites = family_suites(family, loaded[family])
    out: dict[tuple[str, str], list[tuple[str, Query]]] = defaultdict(list)
    for name, suite in suites.items():
        derived = name != family
        asked = list(suite.queries)
        if not derived:
            asked += cross_scope_negatives(suite, per_query=OTHER_SCOPES)
            if family in OWN:
                asked += generated_queries(suite)
        elif name.endswith("-merged") or name == "small-merged-long":
            pass
        buckets: dict[str, list[Query]] = defaultdict(list)
        for q in asked:
            buckets[kind_of(q.category, bool(q.relevant))].append(q)
        for kind, qs in sorted(buckets.items()):
            cap = (CAP_DERIVED if derived else CAP_ANSWERABLE) if kind == "answerable" else CAP_NEGATIVE
            for q in _capped(qs, cap):
                out[(name, q.scope)].append((family, q))
    if "scifact" in loaded and family != "scifact" and family not in NO_CLAIMS:
        claims = sorted(loaded["scifact"].queries, key=lambda q: _hashed(q.id))
        for name, suite in suites.items():
            scopes = sorted(s for s in suite.memories if suite.memories[s])
            per = CLAIMS_PER_SCOPE["one" if len(scopes) <= 2 else "many"] // (2 if name != family else 1)
            for scope in scopes:
                pick = sorted(claims, key=lambda q: _hashed(q.id + scope))[:per]
                out[(name, scope)] += [("scifact", Query(f"{q.id}@{name}/{scope}", q.query, (), scope, "cross-suite",
                                                         False, q.id)) for q in pick]
    if family == "scifact":
        sci = loaded["scifact"]
        sci_scope = next(iter(sci.memories))
        for other in OWN:
            if other not in loaded:
                continue
            ours = _capped([q for q in loaded[other].queries if q.relevant], OURS_IN_SCIFACT)
            for q in ours:
                out[("scifact", sci_scope)].append(
                    (other, Query(f"{q.id}@scifact", q.query, (), sci_scope, "cross-suite", False, q.id)))
            for q in ours[: OURS_IN_SCIFACT // 2]:
                out[("scifact-prompts", sci_scope)].append(
                    (other, Query(f"{q.id}@scifact-prompts", wrapped(q.query, q.id), (), sci_scope, "cross-suite",
                                  False, q.id)))
    return out


def static_ready(project, timeout: float = 3600) -> None:
    """Wait until the static tier answers "static" searches. ``prepare_dense`` ends by
    choosing the transformer, which frees the static tier's in-process copy; the next
    static search reads it again from the stored vectors, in the background above
    ``index.INLINE_BUDGET`` memories, and runs without the dense leg until then."""
    from jupymem.retrieval import index

    for _ in range(5):
        if project.engine.dense_leg(project.revision(), index.STATIC) is not None:
            return
        dense = project.tiers.static_index()
        if dense is not None:
            dense.wait(timeout)
    raise AssertionError(f"the static tier does not answer: {project.dense_status()}")
