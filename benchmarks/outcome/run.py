"""Outcome benchmark: does memory change what a real local model writes, and does it harm?

    python benchmarks/outcome/run.py                       # everything: 2 models x 4 conditions x 60 cases
    python benchmarks/outcome/run.py --models 0.5b --part fit --conditions none,context:lessons-last
    python benchmarks/outcome/run.py --table benchmarks/outcome/results/*.json

One command from a fresh clone (in jupymem's own virtual environment): it installs the
pinned server and weights into a cache outside the repository (``models.py``), serves
each model on 127.0.0.1 under ``nice -n 15``, builds a project of 941 memories (the 901
memories of ``benchmarks/suites/own/lessons.gold.jsonl``, then the 40 lessons of
``cases.py``) with its encoders loaded and every memory embedded, and runs the cases
through the real paths:

* ``none``: ``%%ask --no-memory`` in a real IPython ``InteractiveShell`` with jupymem loaded;
* ``context``: ``jupymem.context(request)`` as the system text, nothing else around it (as
  any other assistant may use it), sent by litellm (``context:VARIANT`` swaps in a
  candidate presentation, ``present.py``);
* ``lesson``: the lesson alone, as the system text: the block of a project holding
  nothing else (the ceiling for the model: nothing drowns it);
* ``ask``: ``%%ask`` with memory, in the same shell (a notebook file per case, so no
  case sees another's conversation; anything a turn records is retired after it, so the
  block stays the same bytes for the next case).

Answers are scored by ``cases.py``'s checkers (written and committed before any answer
was read). Results go to ``benchmarks/outcome/results/<model>-<part>-<conditions>.json``
as they come (a partial run keeps what it did), with each answer and its wall time.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import cases  # noqa: E402
import models  # noqa: E402

SUITE = ROOT / "benchmarks" / "suites" / "own" / "lessons.gold.jsonl"
RESULTS = HERE / "results"
CONDITIONS = ("none", "context", "lesson", "ask")


# -- the project ---------------------------------------------------------------------------


def build_project(base: Path) -> Any:
    """A repository with 941 memories, encoders loaded, every memory embedded."""
    os.environ["JUPYMEM_HOME"] = str(base / "home")
    os.environ["JUPYMEM_LANGUAGE"] = "source"  # statements are English; no model call on the way in
    from jupymem.config import Settings
    from jupymem.core.opening import init_project

    repo = base / "repo"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "notebooks").mkdir()
    project = init_project(repo, Settings.from_env())
    rows = [json.loads(line) for line in SUITE.read_text(encoding="utf-8").splitlines() if line.strip()]
    others = [{"statement": r["text"], "kind": r.get("kind") or "fact"} for r in rows if r["type"] == "memory"]
    project.remember_many(others)
    project.remember_many({"statement": c.lesson, "kind": c.kind, "topic": c.topic} for c in cases.LESSONS)
    project.prepare_lexical()
    status = project.prepare_dense(timeout=1800)
    print(f"project: {project.count()} memories, dense: {status}", flush=True)
    return project


def lesson_alone(case: cases.LessonCase, cap: int) -> str:
    """The context a project holding only this lesson gives: its block (nothing is retrieved)."""
    from jupymem.core.block import build_block
    from jupymem.intake.capture import check_statement, memory_id
    from jupymem.models import ACTIVE, SUPPORTED, Memory

    when = "2026-01-01T00:00:00Z"
    m = Memory(id=memory_id(check_statement(case.lesson)), kind=case.kind, statement=case.lesson, standing=SUPPORTED,
               status=ACTIVE, created_at=when, valid_from=when, topic=case.topic)
    return build_block([m], cap).text


# -- the server ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serving(model: models.Model, cache: Path, max_tokens: int):
    python = models.install_server(cache)
    gguf = models.install_model(model, cache)
    port = free_port()
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    log = open(cache / f"server-{model.size}.log", "w")
    cmd = ["nice", "-n", "15", str(python), str(HERE / "serve.py"), "--model", str(gguf), "--alias", model.alias,
           "--port", str(port), "--max-tokens", str(max_tokens)]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"the model server stopped; see {log.name}")
            try:
                with urllib.request.urlopen(url + "/health", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"the model server did not come up; see {log.name}")
            time.sleep(2)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


# -- one case, one condition -----------------------------------------------------------------


class Runner:
    def __init__(self, project: Any, model: models.Model, url: str):
        from IPython.core.interactiveshell import InteractiveShell

        self.project = project
        self.model = model
        self.litellm_model = f"llamafile/{model.alias}"
        os.environ["LLAMAFILE_API_BASE"] = url + "/v1"
        os.environ["JUPYMEM_MODEL"] = self.litellm_model
        os.chdir(project.root)
        self.shell = InteractiveShell.instance()
        self.shell.run_line_magic("load_ext", "jupymem")

    def answer(self, condition: str, variant: str, case_id: str, request: str,
               lesson: cases.LessonCase | None) -> dict[str, Any]:
        from jupymem.intake import llm

        start = time.monotonic()
        shown: Any = None
        if condition in ("none", "ask"):
            text, recorded = self._ask(condition, case_id, request)
            shown = {"recorded": recorded}
        else:
            if condition == "context":
                import present

                messages = present.messages(variant, self.project, request)
            else:  # lesson
                assert lesson is not None
                block = lesson_alone(lesson, self.project.settings.block_cap)
                messages = [{"role": "system", "content": block}, {"role": "user", "content": request}]
            text = llm.complete(self.litellm_model, messages, stream=False).text
            shown = {"system_bytes": len(messages[0]["content"].encode()),
                     "user_bytes": len(messages[-1]["content"].encode())}
        seconds = round(time.monotonic() - start, 1)
        if lesson is not None and condition in ("context", "ask"):
            # Diagnostic only: did the text sent carry the lesson (its first 60 characters)?
            if condition == "ask":
                from jupymem.assistants.inject import build

                sent = build(self.project, request).system_prompt
            else:
                sent = "\n".join(m["content"] for m in messages)
            shown["carried"] = lesson.lesson[:60].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in sent
        return {"answer": text, "seconds": seconds, **shown}

    def _ask(self, condition: str, case_id: str, request: str) -> tuple[str, list[str]]:
        notebook = self.project.root / "notebooks" / f"{condition}-{self.model.size}-{case_id}.ipynb"
        notebook.write_text("{}")
        self.shell.user_ns["__session__"] = str(notebook)
        before = {m.id for m in self.project.list()}
        line = "%%ask --no-memory" if condition == "none" else "%%ask"
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            result = self.shell.run_cell(f"{line}\n{request}", store_history=False)
        recorded = [m.id for m in self.project.list() if m.id not in before]
        for mid in recorded:  # keep the block the same bytes for the next case
            self.project.retire(mid, "outcome benchmark: undo a turn's record")
        text = out.getvalue()
        if not result.success:
            text += "\n[error] " + (err.getvalue() or repr(result.error_in_exec))[-2000:]
        return text, recorded


def score(case_id: str, answer: str) -> dict[str, bool]:
    lesson = next((c for c in cases.LESSONS if c.id == case_id), None)
    if lesson is not None:
        return cases.lesson_verdict(lesson, answer)
    harm = next(c for c in cases.HARMS if c.id == case_id)
    return cases.harm_verdict(harm, answer)


# -- the run ------------------------------------------------------------------------------------


def selected(part: str, only: set[str] | None) -> list[tuple[str, str, cases.LessonCase | None]]:
    out: list[tuple[str, str, cases.LessonCase | None]] = []
    for c in cases.LESSONS:
        out.append((c.id, c.request, c))
    for h in cases.HARMS:
        out.append((h.id, h.request, None))
    return [x for x in out if (part == "all" or cases.part(x[0]) == part) and (only is None or x[0] in only)]


def run(args: argparse.Namespace) -> None:
    cache = models.cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="jupymem-outcome-"))
    t0 = time.monotonic()
    project = build_project(base)
    setup_s = round(time.monotonic() - t0, 1)
    only = set(args.cases.split(",")) if args.cases else None
    todo = selected(args.part, only)
    RESULTS.mkdir(exist_ok=True)
    try:
        for size in args.models.split(","):
            model = models.MODELS[size]
            conds = args.conditions.split(",")
            name = args.name or f"{size}-{args.part}-{'+'.join(c.replace(':', '_') for c in conds)}"
            out_path = RESULTS / f"{name}.json"
            doc: dict[str, Any] = {
                "model": model.alias, "gguf_sha256": model.gguf_sha256, "server": f"{models.SERVER_PACKAGE}=={models.SERVER_VERSION}",
                "part": args.part, "max_tokens": args.max_tokens, "setup_seconds": setup_s,
                "machine": machine(), "rows": [],
            }
            t_model = time.monotonic()
            with serving(model, cache, args.max_tokens) as url:
                runner = Runner(project, model, url)
                for token in conds:  # one condition at a time: its prefix stays in the cache
                    condition, _, variant = token.partition(":")
                    variant = variant or ("shipped" if condition == "context" else "-")
                    for case_id, request, lesson in todo:
                        if condition == "lesson" and lesson is None:
                            continue  # a harm case has no lesson
                        row = {"case": case_id, "part": cases.part(case_id), "condition": condition, "variant": variant,
                               **runner.answer(condition, variant, case_id, request, lesson)}
                        row.update(score(case_id, row["answer"]))
                        doc["rows"].append(row)
                        doc["wall_seconds"] = round(time.monotonic() - t_model, 1)
                        out_path.write_text(json.dumps(doc, indent=1))
                        flags = {k: v for k, v in row.items() if isinstance(v, bool)}
                        print(f"{size} {token:8} {case_id} {row['seconds']:6.1f}s {flags}", flush=True)
            print(table([doc]))
    finally:
        from jupymem.core.opening import close_all

        os.chdir(ROOT)
        close_all()
        shutil.rmtree(base, ignore_errors=True)


def machine() -> dict[str, Any]:
    load = os.getloadavg()
    return {"cpus": os.cpu_count(), "load_at_start": [round(x, 2) for x in load]}


# -- the table -----------------------------------------------------------------------------------


def table(docs: list[dict[str, Any]]) -> str:
    """Per model, variant, part and condition: lessons applied, code present, harm cases passed, time."""
    lines = ["| model | part | condition | presentation | lessons applied | lesson code present | harm passed | "
             "harm code present | median s/answer | wall s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for doc in docs:
        rows = doc["rows"]
        keys = list(dict.fromkeys((r["condition"], r.get("variant", "-")) for r in rows))
        keys.sort(key=lambda k: CONDITIONS.index(k[0]))
        for part in ("fit", "heldout"):
            for condition, variant in keys:
                rs = [r for r in rows if r["part"] == part and r["condition"] == condition
                      and r.get("variant", "-") == variant]
                if not rs:
                    continue
                les = [r for r in rs if r["case"].startswith("o-")]
                harm = [r for r in rs if r["case"].startswith("h-")]
                secs = sorted(r["seconds"] for r in rs)
                median = secs[len(secs) // 2] if len(secs) % 2 else (secs[len(secs) // 2 - 1] + secs[len(secs) // 2]) / 2
                lines.append(
                    f"| {doc['model']} | {part} | {condition} | {variant} | "
                    f"{_n(les, 'applied')} | {_n(les, 'code')} | {_n(harm, 'passes')} | {_n(harm, 'code')} | "
                    f"{median:.1f} | {sum(secs):.0f} |"
                )
    return "\n".join(lines)


def _n(rows: list[dict[str, Any]], key: str) -> str:
    return f"{sum(1 for r in rows if r.get(key))} of {len(rows)}" if rows else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="0.5b,1.5b")
    ap.add_argument("--conditions", default=",".join(CONDITIONS),
                    help="none, context[:VARIANT] (present.py; default shipped), lesson, ask")
    ap.add_argument("--part", choices=("fit", "heldout", "all"), default="all")
    ap.add_argument("--cases", help="comma-separated case ids (a pilot)")
    ap.add_argument("--max-tokens", type=int, default=320)
    ap.add_argument("--name", help="results file name (without .json)")
    ap.add_argument("--table", nargs="+", metavar="JSON", help="only print the table of these results")
    args = ap.parse_args()
    if args.table:
        print(table([json.loads(Path(p).read_text()) for p in args.table]))
        return
    run(args)


if __name__ == "__main__":
    main()
