"""The verdict per suite family: false and correct abstention, and what its labels are worth.

    python benchmarks/verdict_suites.py collect [--families gold,small,...] [--cache DIR] [--vectors DIR]
    python benchmarks/verdict_suites.py report [--cache DIR] [--json FILE] [--markdown FILE]

``collect`` loads every family's suite into real projects (``evaluate.open_scope``, both
dense tiers ready; the transformer's vectors from ``embed_cache`` when ``--vectors`` is
given) and asks each question through ``Project.explain`` in three modes (lexical, the
static tier's hybrid, the transformer's), recording for its first ``ANSWER_K`` candidates
whether each is a relevant memory, the fitted model's confidence (``answerable``) and the
verdict's reading of it (``signals.Reading``). Questions: the suite's own (answerable, and
unanswerable ones: swapped entities, absent attributes, off-topic, LoCoMo's adversarial,
WikiQA's and SQuAD 2.0's questions that have no answer), each answerable one asked in
another scope (``cross-scope``), and for our own suites questions about the people and
identifiers they name (``answer_suites.generated_queries``); capped per kind by a hash.
One JSON file a family in ``--cache``.

``report`` replays the reading (``reading.unaccounted``) over those rows with its
thresholds chosen **leave one family out**: for each family, the setting (of
``GRID``) with the highest mean correct abstention over the other fitted families at which
none of them abstains falsely on more than ``FA_AIM`` of its answerable questions; the
family's figures are that setting's. ``HELD_OUT`` families (WikiQA, SQuAD 2.0) are never
among the others: no choice ever saw them. The labels: ``likely`` is given from ``LIKELY``
and ``strong`` from ``STRONG`` (``answerable``), each the lowest threshold at which the top
hit it labels is right at least 60% / 90% of the time on every fitted family with at least
``LABEL_MIN`` such hits, by the lower Wilson bound (``LABEL_Z``) of its hits (also chosen
without the family reported).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from answer_suites import FAMILIES, OWN, generated_queries, kind_of, static_ready  # noqa: E402
from jupymem.measure.evaluate import Query, cross_scope_negatives, load_suite, open_scope  # noqa: E402
from jupymem.retrieval import answerable, reading  # noqa: E402
from jupymem.retrieval.signals import HYBRID_FEATURES, Reading  # noqa: E402
from jupymem.retrieval.wording import capitalised, wanted_type  # noqa: E402

SUITES = {**FAMILIES, "wikiqa": Path("/work/suites/wikiqa-test.gold.jsonl"),
          "squad2": Path("/work/suites/squad2-dev500.gold.jsonl")}
HELD_OUT = ("wikiqa", "squad2")  # never fitted on, never among the families a choice is made on
MODES = {"lexical": "lexical", "static": "static", "transformer": "transformer"}
CAP_ANSWERABLE = 250
CAP_NEGATIVE = 120
FA_AIM = 0.04  # a setting may let no training family abstain falsely on more than this
LIKELY_PRECISION, STRONG_PRECISION, LABEL_MIN = 0.60, 0.90, 20
# A family's precision at a threshold counts as met when the lower Wilson bound of its hits at
# one standard deviation reaches it, not the point estimate: with 20-50 hits a point estimate
# of 90% is often 80% on the next family, and thresholds chosen on one or two families (the
# small projects' band has two) were the lowest that a handful of lucky hits allowed. Held out,
# P(strong) of the small projects 79% -> 84%, P(likely) 47% -> 54%, LoCoMo's "strong" 106 hits
# at 37% -> 33 at 42% (benchmarks/README.md).
LABEL_Z = 1.0
NEGATIVE_KINDS = ("absent-entity", "absent-attribute", "swapped-entity", "off-topic", "cross-scope", "adversarial",
                  "no-answer")


def _hashed(key: str) -> int:
    return int(hashlib.sha1(key.encode()).hexdigest(), 16)


def kind(q: Query) -> str:
    if not q.relevant and (q.category or "") == "no-answer":
        return "no-answer"
    return kind_of(q.category or "", bool(q.relevant))


def questions(family: str, suite) -> list[Query]:
    """A family's questions, capped per kind (a hash of the query id picks which)."""
    asked = list(suite.queries) + cross_scope_negatives(suite, per_query=1)
    if family in OWN:
        asked += generated_queries(suite)
    buckets: dict[str, list[Query]] = defaultdict(list)
    for q in asked:
        buckets[kind(q)].append(q)
    out = []
    for k, qs in sorted(buckets.items()):
        cap = CAP_ANSWERABLE if k == "answerable" else CAP_NEGATIVE
        out += sorted(qs, key=lambda q: _hashed("cap:" + (q.origin or q.id)))[:cap]
    return out


def collect_family(family: str, cache: Path) -> list[dict]:
    from jupymem.config import Settings
    from jupymem.core.opening import close_all

    done = cache / f"{family}.json"
    if done.exists():
        return json.loads(done.read_text())
    suite = load_suite(SUITES[family])
    asked = questions(family, suite)
    base = Path(tempfile.mkdtemp(prefix=f"jupymem-verdict-{family}-"))
    settings = Settings(home=base / "home", language="source")
    rows = []
    for scope in sorted({q.scope for q in asked}):
        project, ids = open_scope(suite, scope, base, settings)
        project.prepare_lexical()
        status = project.prepare_dense(timeout=7200)
        assert status.dense == "on" and status.tier == "transformer", status
        static_ready(project)
        size = len(suite.memories.get(scope, []))
        for q in (q for q in asked if q.scope == scope):
            relevant = {ids[r] for r in q.relevant if r in ids}
            for mode, explain_mode in MODES.items():
                ranking = project.explain(q.query, answerable.ANSWER_K, mode=explain_mode)
                cands = []
                for c in ranking.candidates[: answerable.ANSWER_K]:
                    band = answerable.band(ranking.active, len(c.memory.statement))
                    raw = answerable.confidence(c.signals, hybrid=ranking.hybrid, band=band, tier=ranking.tier)
                    cands.append({"label": c.memory.id in relevant, "band": band, "raw": round(raw, 5),
                                  "signals": [round(v, 5) for v in c.signals], "chars": len(c.memory.statement),
                                  "reading": [list(map(list, c.reading.lacking)), list(c.reading.names_swapped),
                                              list(c.reading.names_absent), list(map(list, c.reading.modifiers)),
                                              list(c.reading.attributes_missed), list(c.reading.predicates_missed),
                                              c.reading.wants_missed, list(map(list, c.reading.slot_words)),
                                              list(c.reading.names_partial), c.reading.counted,
                                              list(c.reading.names_unknown), c.reading.echoed],
                                  "statement": c.memory.statement[:100]})
                rows.append({"family": family, "scope": scope, "size": size, "id": q.id, "query": q.query,
                             "kind": kind(q), "answerable": bool(q.relevant), "mode": mode, "hybrid": ranking.hybrid,
                             "candidates": cands})
        print(f"{family}/{scope or '-'}: {len(rows)} rows", file=sys.stderr, flush=True)
    close_all()
    cache.mkdir(parents=True, exist_ok=True)
    done.write_text(json.dumps(rows))
    return rows


# -- replaying the reading ---------------------------------------------------------------------

# What was measured and left out of the grid: "who ..." questions' verb ("predicates") refused
# "who approves the forecast?" for "Ingrid Larsen signs off the forecast" (3 of the small
# projects' 7 false abstentions); the stricter of both models in larger projects ("min") put
# gold, paraphrase and LoCoMo at 19-24% false abstention. Statements are judged by the larger
# projects' model at every size ("large"): with the small projects' own ("band"), recording a
# few unrelated notes into a project of ten lifted 19 of the property test's 376 questions over
# the threshold at the switch (tests/test_verdict_stability.py); it costs the small projects'
# correct abstention 10-15 points (benchmarks/answerability.md keeps "unread" beside).
#
# Who-questions whose memory names no one ("untyped") below 0.8 (words as plain as "model",
# "new") were left out until 6 December: held out, the small projects' strong precision went
# from 78% to 76% then. Measured again with the Wilson-bound labels and a role counting as
# someone ("Jonas ... is the *person* to ask": ``wording.names_someone``), 0.5 is chosen in
# every held-out round, the labels' precision unchanged (benchmarks/README.md). The same rule for "when" and "how many" questions abstained
# on 7% of LoCoMo's answerable ones held out (a turn does not write its session's date), so
# reading.py reads it for "who" alone. "rivals" comes first: it changed no abstention on any
# family (every question it reads abstained already), and a tie goes to the reading.
GRID = {"meaning": (0.35,), "specific": (0.6,), "modifiers": ("slot",), "absent_names": (True,),
        "predicates": (False,), "unmet_specific": (0.8, 1.2), "unmet_share": (0.5,),
        "boundary": ("large",), "cover_min": (0.0, 0.2, 0.3, 0.35), "margin_max": (0.2, 0.25),
        "untyped": (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2, 9.0), "alien": (1.0, 1.2, 1.4, 9.0), "rivals": (True, False),
        "valued": (False, True), "counted": (False, True), "lone_names": (False, True)}
COVER_GRID, UNTYPED_GRID, ALIEN_GRID, VALUED_GRID = GRID["cover_min"], GRID["untyped"], GRID["alien"], GRID["valued"]
COUNTED_GRID, LONE_GRID = GRID["counted"], GRID["lone_names"]
# The transformer alone reads who-questions' missing person and subjects memory never
# mentions: with both, the static tier's held-out paraphrase false abstention was 7.2% (the
# setting chosen on the others), with the second alone 4.4% (3.2% without); the lexical
# leg has no word vectors to tell a missing word from a paraphrase's.
# The static tier does not read "valued" either: chosen there held out, it put the gold suite's
# false abstention at 3.4% (2.3% without), and `jupymem eval` over that suite in the static
# tier at 3.8%, over the 3% tests/test_eval.py holds it to ("how many people can the phone
# team reach out to each week?" lost its last candidate that answered).
# The lexical leg does not read "counted" either: without word vectors a count in other words
# ("60,000 *reports*" for documents, "three *kids*" for children) is a count of something else;
# chosen in the paraphrases' held-out round, it put their false abstention at 5.6% (3.6% without).
# The static tier does not read "lone_names": chosen in the paraphrases' held-out round (in no
# other), it put their false abstention at 5.6% ("the *Brazilian* colleagues" for São Paulo's).
UNREAD = {"lexical": ("untyped", "alien", "counted"), "static": ("untyped", "alien", "valued", "lone_names"),
          "transformer": ()}
# The static tier and the lexical leg keep the small projects' own models ("band"): they answer
# only while the transformer loads or without it, and there the small projects' correct
# abstention (76% / 70% against 59% / 70%, held out) was worth more than the switch at ten.
BOUNDARY = {"lexical": "band", "static": "band", "transformer": "large"}
# The static tier's share of the question held at least 0.3: at 0.35 (chosen here with 4% as
# the aim) the gold suite's answerable questions lost a third one to it in `jupymem eval`,
# over the 3% tests/test_eval.py holds that suite to.
COVER_MAX = {"lexical": 0.35, "static": 0.3, "transformer": 0.35}


_TYPE_MISSED = HYBRID_FEATURES.index("type_missed")
FITTED_MODE = {"lexical": "lexical", "static": "hybrid", "transformer": "transformer"}


def confidence(c: dict, hybrid: bool, setting: dict, mode: str = "transformer") -> float:
    """A candidate's confidence as ``reading.judged`` makes it, before ``answerable.calibrated``
    (the labels' thresholds are chosen on this scale)."""
    read = c.get("_read")
    if read is None:
        lacking, swapped, absent, modifiers, attributes, *predicates = c["reading"]
        # The type the question asks for, when the memory holds none (older caches: read
        # again from the query and the signals' ``type_missed``).
        wants = predicates[1] if len(predicates) > 1 else (
            wanted_type(c["_query"]) if c.get("signals") and c["signals"][_TYPE_MISSED] > 0 else None)
        slots = tuple(tuple(x) for x in predicates[2]) if len(predicates) > 2 else ()
        partial = tuple(predicates[3]) if len(predicates) > 3 else ()  # older caches: not read
        counted = predicates[4] if len(predicates) > 4 else None
        # Names written with a capital only (``wording.capitalised``), as ``signals`` reads them now.
        unknown = tuple(w for w in predicates[5] if w in capitalised(c["_query"])) if len(predicates) > 5 else ()
        echoed = bool(predicates[6]) if len(predicates) > 6 else False  # older caches: not read
        read = c["_read"] = Reading(tuple(tuple(x) for x in lacking), tuple(swapped), tuple(absent),
                                    tuple(tuple(m) for m in modifiers), tuple(attributes),
                                    tuple(predicates[0]) if predicates else (), wants, slots, partial, counted,
                                    names_unknown=unknown, echoed=echoed)
    raw = c["raw"]
    boundary = setting.get("boundary", "band")
    if boundary != "band" and c["band"] in ("small", "large") and "signals" in c:
        if "_other" not in c:  # the other statement band's model
            other = answerable.MODELS[(FITTED_MODE[mode], "large" if c["band"] == "small" else "small")]
            c["_other"] = other.confidence(c["signals"][: len(other.features)])
        if boundary == "min" and c["band"] == "large":
            raw = min(raw, c["_other"])
        elif boundary == "large" and c["band"] == "small":
            raw = c["_other"]
    if setting.get("read") is False:
        return raw
    got = {**reading.DEFAULTS, **setting}
    tier = "transformer" if mode == "transformer" else "static" if hybrid else None
    if reading.unaccounted(read, band=c["band"], hybrid=hybrid, tier=tier, setting=got, signals=c.get("signals")):
        return reading.CEILING * raw
    return raw


def scored(rows: list[dict], setting: dict[str, float]) -> list[dict]:
    out = []
    for r in rows:
        for c in r["candidates"]:
            c["_query"] = r["query"]
        confs = [confidence(c, r["hybrid"], setting, r["mode"]) for c in r["candidates"]]
        answered = any(v >= answerable.ANSWER_AT for v in confs)
        top = (confs[0], bool(r["candidates"][0]["label"]), r["candidates"][0]["band"]) if confs else None
        out.append({**r, "answered": answered, "top": top})
    return out


def figures(rows: list[dict], likely: dict[str, float] | float, strong: dict[str, float] | float) -> dict:
    """False and correct abstention (overall, per kind of negative) and the precision of the
    answered top hits per label; ``likely``/``strong``: the label thresholds, per band."""
    if not isinstance(likely, dict):
        likely = dict.fromkeys(answerable.BANDS, likely)
    if not isinstance(strong, dict):
        strong = dict.fromkeys(answerable.BANDS, strong)
    pos = [r for r in rows if r["answerable"]]
    neg = [r for r in rows if not r["answerable"]]
    out: dict = {"n+": len(pos), "n-": len(neg),
                 "fa": sum(not r["answered"] for r in pos) / len(pos) if pos else None,
                 "ca": sum(not r["answered"] for r in neg) / len(neg) if neg else None, "by_kind": {}}
    for k in NEGATIVE_KINDS:
        ks = [r for r in neg if r["kind"] == k]
        if ks:
            out["by_kind"][k] = (sum(not r["answered"] for r in ks) / len(ks), len(ks))
    tops = [r["top"] for r in rows if r["answered"] and r["top"]]
    for name in ("strong", "likely", "weak"):
        got = [right for c, right, b in tops if label(c, likely[b], strong[b]) == name]
        out[name] = (sum(got) / len(got) if got else None, len(got))
    return out


def label(c: float, likely: float, strong: float) -> str:
    return "strong" if c >= strong else "likely" if c >= likely else "weak"


def wilson_lower(right: int, n: int, z: float = LABEL_Z) -> float:
    """The lower end of the Wilson interval of ``right`` of ``n`` at ``z`` deviations."""
    if n == 0:
        return 0.0
    p = right / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - spread) / (1 + z * z / n)


def label_threshold(rows: list[dict], precision: float, floor: float, upper: float = 2.0, band: str | None = None) -> float:
    """The lowest threshold >= ``floor`` at which the answered top hits at or above it (and
    below ``upper``; of ``band``) are right ``precision`` of the time in every family with
    LABEL_MIN of them."""
    by_family: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for r in rows:
        if r["answered"] and r["top"] and (band is None or r["top"][2] == band):
            by_family[r["family"]].append(r["top"][:2])
    for t in sorted({floor, *[c for hits in by_family.values() for c, _ in hits if c >= floor]}):
        ok = True
        for hits in by_family.values():
            got = [right for c, right in hits if t <= c < upper]
            if len(got) >= LABEL_MIN and wilson_lower(sum(got), len(got)) < precision:
                ok = False
                break
        if ok:
            return round(t, 4)
    return 1.0


def per_setting(rows: list[dict], families: list[str]) -> list[tuple[dict, dict[str, tuple]]]:
    """Every setting of ``GRID`` with each family's (false, correct) abstention under it."""
    out = []
    for values in itertools.product(*GRID.values()):
        setting = dict(zip(GRID, values))
        s = scored(rows, setting)
        fam = {}
        for f in families:
            fig = figures([r for r in s if r["family"] == f], 0.5, 1.0)
            fam[f] = (fig["fa"], fig["ca"])
        out.append((setting, fam))
    return out


def choose(
    rows: list[dict], table: list[tuple[dict, dict[str, tuple]]], families: list[str]
) -> tuple[dict, dict[str, float], dict[str, float]]:
    """The reading's setting, then the label thresholds per band (likely, strong), chosen on
    ``families``' figures alone: the highest mean correct abstention at which none abstains
    falsely on more than FA_AIM."""
    def key(entry: tuple[dict, dict[str, tuple]]) -> tuple:
        fam = entry[1]
        fas = [fam[f][0] for f in families if fam[f][0] is not None]
        cas = [fam[f][1] for f in families if fam[f][1] is not None]
        return (-max(0.0, max(fas) - FA_AIM), sum(cas) / max(len(cas), 1), -max(fas))

    best = max(table, key=key)[0]
    s = scored([r for r in rows if r["family"] in families], best)
    strong = {b: label_threshold(s, STRONG_PRECISION, answerable.ANSWER_AT, band=b) for b in answerable.BANDS}
    likely = {b: label_threshold(s, LIKELY_PRECISION, answerable.ANSWER_AT, strong[b], band=b) for b in answerable.BANDS}
    return best, likely, strong


def report(cache: Path) -> dict:
    rows = []
    for f in SUITES:
        path = cache / f"{f}.json"
        if path.exists():
            rows += json.loads(path.read_text())
    families = [f for f in SUITES if any(r["family"] == f for r in rows)]
    fitted = [f for f in families if f not in HELD_OUT]
    out: dict = {"families": {}, "modes": list(MODES)}
    for mode in MODES:
        mine = [r for r in rows if r["mode"] == mode]
        GRID["boundary"] = (BOUNDARY[mode],)
        GRID["cover_min"] = tuple(v for v in COVER_GRID if v <= COVER_MAX[mode])
        GRID["untyped"] = (9.0,) if "untyped" in UNREAD[mode] else UNTYPED_GRID
        GRID["alien"] = (9.0,) if "alien" in UNREAD[mode] else ALIEN_GRID
        GRID["valued"] = (False,) if "valued" in UNREAD[mode] else VALUED_GRID
        GRID["counted"] = (False,) if "counted" in UNREAD[mode] else COUNTED_GRID
        GRID["lone_names"] = (False,) if "lone_names" in UNREAD[mode] else LONE_GRID
        table = per_setting(mine, families)
        print(f"{mode}: {len(table)} settings scored", file=sys.stderr, flush=True)
        out["families"][mode] = {}
        for f in families:
            setting, likely, strong = choose(mine, table, [g for g in fitted if g != f])
            fig = figures(scored([r for r in mine if r["family"] == f], setting), likely, strong)
            base = figures(scored([r for r in mine if r["family"] == f], {"read": False}), 0.5, 1.0)
            out["families"][mode][f] = {**fig, "setting": setting, "likely_at": likely, "strong_at": strong,
                                        "unread": {"fa": base["fa"], "ca": base["ca"]}}
        setting, likely, strong = choose(mine, table, fitted)
        out.setdefault("shipped", {})[mode] = {"setting": setting, "likely_at": likely, "strong_at": strong}
    return out


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.1f}%"


def markdown(result: dict) -> str:
    lines = []
    for mode, table in result["families"].items():
        lines += [f"### {mode}", "", "| family | n+ | n− | FA | CA | FA / CA unread | " + " | ".join(NEGATIVE_KINDS)
                  + " | P(strong) | P(likely) | P(weak) |", "|---" * (6 + len(NEGATIVE_KINDS) + 3) + "|"]
        for f, e in table.items():
            kinds = " | ".join(f"{_pct(e['by_kind'][k][0])} ({e['by_kind'][k][1]})" if k in e["by_kind"] else "–"
                               for k in NEGATIVE_KINDS)
            labels = " | ".join(f"{_pct(e[b][0])} ({e[b][1]})" for b in ("strong", "likely", "weak"))
            name = f"{f} (held out)" if f in HELD_OUT else f
            unread = f"{_pct(e['unread']['fa'])} / {_pct(e['unread']['ca'])}"
            lines.append(f"| {name} | {e['n+']} | {e['n-']} | {_pct(e['fa'])} | {_pct(e['ca'])} | {unread} | {kinds} | "
                         f"{labels} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=("collect", "report"))
    p.add_argument("--families", default=",".join(SUITES))
    p.add_argument("--cache", default="/work/cache-retrieval/verdict")
    p.add_argument("--vectors", help="a folder of cached transformer vectors (embed_cache.py)")
    p.add_argument("--json")
    p.add_argument("--write", action="store_true", help="write the chosen reading settings and LIKELY into "
                   "jupymem/data/answerability.json and the tables into benchmarks/answerability.md")
    a = p.parse_args(argv)
    cache = Path(a.cache)
    if a.command == "collect":
        if a.vectors:
            import embed_cache

            embed_cache.install(a.vectors)
        for f in a.families.split(","):
            if f in SUITES and SUITES[f].exists():
                collect_family(f, cache)
        return 0
    result = report(cache)
    text = markdown(result)
    print(text)
    print(json.dumps(result["shipped"]))
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=1))
    if a.write:
        write(result, text)
    return 0


MARK = "<!-- verdict_suites.py -->"


def write(result: dict, text: str) -> None:
    """The settings chosen on every fitted family into the data file (the models and STRONG
    stay as ``fit_answerability.py`` wrote them), the tables into answerability.md."""
    data = json.loads(answerable.FITTED.read_text(encoding="utf-8"))
    shipped = result["shipped"]
    mode_key = {"lexical": "lexical", "static": "hybrid", "transformer": "transformer"}
    data["reading"] = {mode_key[m]: v["setting"] for m, v in shipped.items()}
    data.pop("likely", None)
    data["labels"] = {mode_key[m]: {b: [v["likely_at"][b], v["strong_at"][b]] for b in answerable.BANDS}
                      for m, v in shipped.items()}
    answerable.FITTED.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    md = ROOT / "benchmarks" / "answerability.md"
    head = md.read_text(encoding="utf-8").split(MARK)[0].rstrip()
    settings = "; ".join(f"{m}: " + ", ".join(f"{k} {v}" for k, v in s["setting"].items()) + " (likely / strong from "
                         + ", ".join(f"{b} {s['likely_at'][b]} / {s['strong_at'][b]}" for b in answerable.BANDS) + ")"
                         for m, s in shipped.items())
    md.write_text(f"{head}\n\n{MARK}\n## The verdict's reading, per family (issue 32)\n\n"
                  "Made by `benchmarks/verdict_suites.py` (its docstring says how). Every figure of a family comes "
                  "from the reading settings and label thresholds chosen without that family; WikiQA and SQuAD 2.0 "
                  "are never among the families a choice is made on. \"unread\": the fitted models alone, as "
                  f"before this issue. Settings chosen on every fitted family: {settings}.\n\n{text}\n",
                  encoding="utf-8")
    print(f"wrote {answerable.FITTED} and {md}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
