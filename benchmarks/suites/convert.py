"""Convert public retrieval test sets into jupymem gold suites (one JSON object a line).

Standard library only. Each subcommand reads the extracted source files from a directory
given on the command line and writes one suite:

    python benchmarks/suites/convert.py locomo   SRC_DIR OUT.gold.jsonl
    python benchmarks/suites/convert.py nfcorpus SRC_DIR OUT.gold.jsonl [--max-queries N --seed S]
    python benchmarks/suites/convert.py cisi     SRC_DIR OUT.gold.jsonl
    python benchmarks/suites/convert.py cranfield SRC_DIR OUT.gold.jsonl
    python benchmarks/suites/convert.py wikiqa   SRC_DIR OUT.gold.jsonl [--split test]
    python benchmarks/suites/convert.py squad2   SRC_DIR OUT.gold.jsonl

WikiQA and SQuAD 2.0 hold questions that memory cannot answer (``"relevant": []``, category
``no-answer``); they are kept out of every fit and only reported.

See README.md beside this file for the sources, their licences and the exact commands.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

MAX_CHARS = 20_000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

# LoCoMo's numeric QA categories, as the authors' own code names them
# (task_eval/dpr_qa.py on the `code` branch: {1: 'Multi-Hop', 2: 'Time', 3: 'Knowledge',
# 4: 'Single-Hop', 5: 'Adversarial'}; category 5 is graded as "not mentioned" in evaluation.py).
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def clean(text: str) -> str:
    """Printable text: control characters (other than newline and tab) become spaces;
    longer than MAX_CHARS is cut at a word boundary."""
    text = _CONTROL.sub(" ", text.replace("\r\n", "\n").replace("\r", "\n")).strip()
    if len(text) > MAX_CHARS:
        cut = text.rfind(" ", 0, MAX_CHARS)
        text = text[: cut if cut > MAX_CHARS // 2 else MAX_CHARS].rstrip()
    return text


class Writer:
    def __init__(self, path: str) -> None:
        self.fp = open(path, "w", encoding="utf-8")
        self.memories = 0
        self.queries = 0
        self.abstain = 0
        self.empty = 0
        self.categories: Counter[str] = Counter()

    def memory(self, id_: str, text: str, scope: str | None = None) -> bool:
        """Write a memory; an empty text is left out (False), as jupymem refuses it."""
        text = clean(text)
        if not text:
            self.empty += 1
            return False
        obj = {"type": "memory", "id": id_, "text": text, "kind": "fact"}
        if scope:
            obj["scope"] = scope
        self.fp.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.memories += 1
        return True

    def query(self, id_: str, query: str, relevant: list[str], scope: str | None = None,
              category: str | None = None) -> None:
        obj: dict = {"type": "query", "id": id_, "query": clean(query), "relevant": relevant}
        if scope:
            obj["scope"] = scope
        if category:
            obj["category"] = category
            self.categories[category] += 1
        self.fp.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.queries += 1
        self.abstain += not relevant

    def close(self, extra: str = "") -> None:
        self.fp.close()
        cats = f" categories={dict(sorted(self.categories.items()))}" if self.categories else ""
        print(f"{self.fp.name}: {self.memories} memories, {self.queries} queries "
              f"({self.abstain} abstain), {self.empty} empty memories left out{cats}{extra}", file=sys.stderr)


# --- LoCoMo -------------------------------------------------------------------------------

def _locomo_samples(src: Path) -> list[tuple[str, dict]]:
    """locomo10.json (a list of samples with sample_id), or the per-conversation files
    <N>.json of data/locomo10.zip (scope conv-<N>)."""
    single = src / "locomo10.json" if src.is_dir() else src
    if single.is_file():
        return [(s["sample_id"], s) for s in json.loads(single.read_text(encoding="utf-8"))]
    out = []
    for f in sorted(src.rglob("*.json"), key=lambda p: int(p.stem) if p.stem.isdigit() else 10**9):
        d = json.loads(f.read_text(encoding="utf-8"))
        conv = d.get("conversation", d)
        out.append((d.get("sample_id") or f"conv-{f.stem}", {"conversation": conv, "qa": d["qa"]}))
    return out


def _evidence_ids(evidence: list) -> list[str]:
    ids = []
    for e in evidence or []:
        for part in re.split(r"[;,\s]+", str(e).replace("(", " ").replace(")", " ")):
            if part:
                ids.append(part)
    return ids


def locomo(args: argparse.Namespace) -> None:
    w = Writer(args.out)
    skipped = Counter()
    for scope, sample in _locomo_samples(Path(args.src)):
        conv = sample["conversation"]
        turns: set[str] = set()
        sessions = sorted((k for k in conv if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list)),
                          key=lambda k: int(k.split("_")[1]))
        for key in sessions:
            for t in conv[key]:
                text = f"{t['speaker']}: {t.get('text', '')}"
                if t.get("blip_caption"):
                    text += f" [shares a photo of: {t['blip_caption']}]"
                if w.memory(f"{scope}:{t['dia_id']}", text, scope):
                    turns.add(t["dia_id"])
        for n, qa in enumerate(sample["qa"], 1):
            category = LOCOMO_CATEGORIES.get(qa.get("category"), str(qa.get("category")))
            if category == "adversarial":
                w.query(f"{scope}:q{n}", qa["question"], [], scope, category)
                continue
            ids = _evidence_ids(qa.get("evidence"))
            if not ids:
                skipped["no evidence"] += 1
                continue
            if any(i not in turns for i in ids):
                skipped["evidence id not a turn"] += 1
                continue
            w.query(f"{scope}:q{n}", qa["question"], [f"{scope}:{i}" for i in dict.fromkeys(ids)], scope, category)
    w.close(f", skipped {dict(skipped)}")


# --- NFCorpus (original release, test split) ------------------------------------------------

def nfcorpus(args: argparse.Namespace) -> None:
    src = Path(args.src)
    split = args.split
    docs: dict[str, str] = {}
    for line in (src / f"{split}.docs").read_text(encoding="utf-8").splitlines():
        doc_id, _, text = line.partition("\t")
        if doc_id and text.strip():
            docs[doc_id] = text
    queries: dict[str, str] = {}
    for line in (src / f"{split}.{args.queries}.queries").read_text(encoding="utf-8").splitlines():
        qid, _, text = line.partition("\t")
        if qid and text.strip():
            queries[qid] = text
    rel: dict[str, list[str]] = defaultdict(list)
    for line in (src / f"{split}.2-1-0.qrel").read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 4 and int(parts[3]) > 0 and parts[2] in docs:
            rel[parts[0]].append(parts[2])
    kept = [q for q in queries if rel.get(q)]
    if args.max_queries and len(kept) > args.max_queries:
        kept = sorted(random.Random(args.seed).sample(kept, args.max_queries))
    w = Writer(args.out)
    for doc_id, text in docs.items():
        w.memory(doc_id, text)
    for q in kept:
        w.query(q, queries[q], list(dict.fromkeys(rel[q])))
    w.close(f", {len(queries) - len([q for q in queries if rel.get(q)])} queries without relevant docs left out")


# --- SMART-format classic collections (CISI, Cranfield) ------------------------------------

def _smart_records(path: Path) -> list[dict[str, str]]:
    """Records of a SMART-style file: '.I n' starts one, '.X' '.T' '.W' ... start fields."""
    records: list[dict[str, str]] = []
    field = None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = re.match(r"^\.([A-Z])(?:\s+(.*))?$", line)
        if m and m.group(1) == "I":
            records.append({"I": (m.group(2) or "").strip()})
            field = None
        elif m and records:
            field = m.group(1)
            records[-1].setdefault(field, "")
            if m.group(2):
                records[-1][field] += m.group(2).strip() + "\n"
        elif field and records:
            records[-1][field] += line + "\n"
    return records


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def _doc_text(title: str, body: str) -> str:
    title, body = _flat(title), _flat(body)
    if not body:
        return title
    if body.lower().startswith(title.lower()):
        return body
    return f"{title}. {body}" if title else body


def _smart(src: Path, names: tuple[str, str, str], judged) -> tuple[list[dict], list[dict], dict[str, list[str]]]:
    """A SMART-format collection: its documents, its queries, and query -> relevant doc ids
    from the judgement file, one line at a time through ``judged`` (its split fields ->
    (query, doc) or None)."""
    docs = _smart_records(src / names[0])
    queries = _smart_records(src / names[1])
    rel: dict[str, list[str]] = defaultdict(list)
    for line in (src / names[2]).read_text(encoding="utf-8").splitlines():
        pair = judged(line.split())
        if pair:
            rel[pair[0]].append(pair[1])
    return docs, queries, rel


def _write_docs(w: Writer, docs: list[dict]) -> set[str]:
    """Each document as a memory ("title. body"); the ids written (empty ones are left out)."""
    return {d["I"] for d in docs if w.memory(d["I"], _doc_text(d.get("T", ""), d.get("W", "")))}


def cisi(args: argparse.Namespace) -> None:
    docs, queries, rel = _smart(Path(args.src), ("CISI.ALL", "CISI.QRY", "CISI.REL"),
                                lambda parts: (parts[0], parts[1]) if len(parts) >= 2 else None)
    w = Writer(args.out)
    ids = _write_docs(w, docs)
    for q in queries:
        relevant = [r for r in dict.fromkeys(rel.get(q["I"], [])) if r in ids]
        if relevant:  # CISI queries without judgements are unjudged, not unanswerable
            w.query(q["I"], _flat(q.get("W") or q.get("T", "")), relevant)
    w.close(f", {len(queries) - w.queries} unjudged queries left out")


def cranfield(args: argparse.Namespace) -> None:
    # grades 1 (complete answer) .. 4 (minimum interest) are relevant; -1 is "no interest"
    docs, queries, rel = _smart(Path(args.src), ("cran.all.1400", "cran.qry", "cranqrel"),
                                lambda parts: (parts[0], parts[1]) if len(parts) >= 3 and int(parts[2]) > 0 else None)
    w = Writer(args.out)
    ids = _write_docs(w, docs)
    # cranqrel numbers the queries 1..225 in file order, not by their '.I' labels
    for n, q in enumerate(queries, 1):
        relevant = [r for r in dict.fromkeys(rel.get(str(n), [])) if r in ids]
        if relevant:
            w.query(str(n), _flat(q.get("W", "")), relevant)
    w.close(f", {len(queries) - w.queries} queries without relevant docs left out")


# --- question answering over sentences, with questions that have no answer --------------


def _visible(text: str) -> str:
    """Without invisible format characters (Unicode Cf: zero-width joiners, bidi marks),
    which a few Wikipedia sentences carry by the dozen and jupymem refuses past 16."""
    import unicodedata

    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def wikiqa(args: argparse.Namespace) -> None:
    """WikiQA (Yang et al., EMNLP 2015): every candidate sentence of the split is a memory
    (one project; a sentence shared by two questions is written once); a question is
    answerable by its sentences labelled 1, and has no answer (``no-answer``) when none is:
    its page's other sentences are in memory, about the same subject, answering nothing."""
    src = Path(args.src)
    rows = [line.split("\t") for line in (src / f"WikiQA-{args.split}.tsv").read_text(encoding="utf-8").splitlines()[1:]]
    w = Writer(args.out)
    written: set[str] = set()
    questions: dict[str, tuple[str, list[str]]] = {}
    for qid, question, _doc, _title, sid, sentence, label in (r for r in rows if len(r) == 7):
        if sid not in written and w.memory(sid, _visible(sentence)):
            written.add(sid)
        entry = questions.setdefault(qid, (question, []))
        if label.strip() == "1" and sid in written:
            entry[1].append(sid)
    for qid, (question, relevant) in questions.items():
        w.query(qid, question, relevant, category="answerable" if relevant else "no-answer")
    w.close()


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def squad2(args: argparse.Namespace) -> None:
    """SQuAD 2.0 (Rajpurkar et al., ACL 2018), a seeded sample of its dev split with the
    paragraphs (``queries.json``: id, context, question; ``ground_truth.json``: answers,
    is_impossible): each paragraph cut into sentences, each sentence a memory (one project);
    an answerable question's relevant sentences are those holding one of its answers; an
    impossible one (written to look answerable by the paragraph) has none (``no-answer``)."""
    src = Path(args.src)
    queries = json.loads((src / "queries.json").read_text(encoding="utf-8"))["queries"]
    truth = json.loads((src / "ground_truth.json").read_text(encoding="utf-8"))
    w = Writer(args.out)
    paragraphs: dict[str, list[tuple[str, str]]] = {}
    lost = 0
    for q in queries:
        context = q["context"]
        if context not in paragraphs:
            n = len(paragraphs)
            sentences = [s.strip() for s in _SENTENCE_END.split(_visible(context)) if s.strip()]
            paragraphs[context] = [(f"p{n}-s{i}", s) for i, s in enumerate(sentences) if w.memory(f"p{n}-s{i}", s)]
        answer = truth.get(q["id"], {})
        if answer.get("is_impossible"):
            w.query(q["id"], q["question"], [], category="no-answer")
            continue
        texts = [a for a in answer.get("answers", []) if a.strip()]
        relevant = [sid for sid, s in paragraphs[context] if any(a in s for a in texts)]
        if not relevant:  # the answer spans a sentence break
            lost += 1
            continue
        w.query(q["id"], q["question"], relevant, category="answerable")
    w.close(f", {lost} answerable questions whose answer crosses a sentence break left out")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="source", required=True)
    for name, fn in (("locomo", locomo), ("nfcorpus", nfcorpus), ("cisi", cisi), ("cranfield", cranfield),
                     ("wikiqa", wikiqa), ("squad2", squad2)):
        s = sub.add_parser(name)
        s.add_argument("src", help="directory with the extracted source files")
        s.add_argument("out", help="the .gold.jsonl to write")
        s.set_defaults(fn=fn)
        if name == "nfcorpus":
            s.add_argument("--split", default="test", choices=["train", "dev", "test"])
            s.add_argument("--queries", default="titles",
                           choices=["titles", "all", "nontopic-titles", "vid-titles", "vid-desc"])
            s.add_argument("--max-queries", type=int, default=1000)
            s.add_argument("--seed", type=int, default=13)
        if name == "wikiqa":
            s.add_argument("--split", default="test", choices=["train", "dev", "test"])
    args = p.parse_args(argv)
    args.fn(args)


if __name__ == "__main__":
    main()
