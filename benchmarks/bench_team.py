"""The team engine (PostgreSQL) under load, through a restart, and beside SQLite, in one run.

    python benchmarks/bench_team.py                  # --scale small: about a minute, for CI
    python benchmarks/bench_team.py --scale full     # the issue's sizes (tens of minutes)
    python benchmarks/bench_team.py --json           # one JSON object on stdout

A real PostgreSQL 16 from the ``pgserver`` wheel in a temporary folder, with the team schema
made by ``admin.create_schema``; every figure comes through ``Project`` (opened on the URL as
a person's process opens it: ``JUPYMEM_DATABASE_URL``), in a temporary ``JUPYMEM_HOME``. Three
parts:

* **load**: ``--writers`` processes each record ``--per-writer`` distinct statements with
  ``Project.remember`` into one project while ``--searchers`` processes search it; when half
  the records are in, the server is stopped (``pg_ctl stop -m fast``: every connection
  drops), kept down ``--down`` seconds and started again. ``Project.remember`` does not retry:
  it raises ``StorageError``, and the writer retries the same statement until it is told it
  succeeded. Then: every acknowledged memory must be in the database (lost), no memory may
  have two record events (duplicated), and ``Project.verify`` must pass. Reported: record
  p50/p95 (successful attempts, all writers at once) and search p50 under that load.
* **spread**: ``--projects`` projects of ``--per-project`` memories each (``remember_many``
  in batches of 1,000), then search p50 and the block for a prompt (``jupymem.context``)
  in a sample of them, each once its index is built (the first search is reported apart).
* **one project**: the same ``--one-project`` memories in a SQLite project and a PostgreSQL
  one, the same queries asked of both in turn (the order alternates, so a busy moment of the
  shared machine falls on both); search p50 on each and their ratio.

Searches are lexical on both engines (``mode="lexical"``, ``JUPYMEM_ENCODER=none``): the
team engine has no dense leg yet, and the comparison is of the same work. Figures are
medians (p50) of wall-clock milliseconds; the load average is reported beside them, since
two shared cores make wall time noisy. Targets (issue): record p50 < 10 ms with 50 writers,
search p50 < 50 ms at 1,000,000 memories across 100 projects, block for a prompt < 20 ms,
PostgreSQL search within 2x of SQLite at 100,000 memories; 0 lost, 0 duplicated, verify ok.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jupymem.config import Settings  # noqa: E402
from jupymem.measure.bench import corpus, queries  # noqa: E402

GIT_ENV = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
ROLE, PASSWORD = "bench_writer", "pw-bench"


@dataclass(frozen=True)
class Scale:
    writers: int
    per_writer: int
    searchers: int
    projects: int
    per_project: int
    one_project: int
    queries: int
    down: float = 2.0


SCALES = {
    "small": Scale(writers=6, per_writer=30, searchers=2, projects=4, per_project=500, one_project=3000, queries=40),
    "full": Scale(writers=50, per_writer=200, searchers=20, projects=100, per_project=1000, one_project=100_000,
                  queries=200),
}


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _ms(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"n": 0, "p50_ms": None, "p95_ms": None}
    ordered = sorted(values)
    return {"n": len(values), "p50_ms": round(statistics.median(ordered), 2),
            "p95_ms": round(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 2)}


def make_repo(path: Path) -> Path:
    """A git repository with one commit: its root commit is its project's key on the server."""
    env = {**os.environ, **GIT_ENV}
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=env)
    (path / "README.md").write_text(f"# {path}\n")
    subprocess.run(["git", "-C", str(path), "add", "README.md"], check=True, env=env)
    subprocess.run(["git", "-C", str(path), "commit", "-q", "-m", "first"], check=True, env=env)
    return path.resolve()


def settings_for(home: Path, url: str | None) -> Settings:
    return Settings(home=home, database_url=url, encoder="none", interactive=False)


class Server:
    """pgserver's PostgreSQL, which this run may stop and start again."""

    def __init__(self, folder: Path) -> None:
        import pgserver

        self.pg = pgserver.get_server(str(folder), cleanup_mode="stop")
        self.admin_url: str = self.pg.get_uri()

    def user_url(self, role: str, password: str) -> str:
        from psycopg.conninfo import make_conninfo

        return str(make_conninfo(self.admin_url, user=role, password=password))

    def stop(self) -> None:
        """A fast shutdown: every session is terminated, as when a server restarts."""
        from pgserver._commands import pg_ctl

        pg_ctl(["-m", "fast", "-w", "stop"], pgdata=self.pg.pgdata, user=self.pg.system_user)

    def start(self) -> None:
        self.pg.ensure_postgres_running()  # pgserver's own start: same socket, same options

    def close(self) -> None:
        self.pg.cleanup()


# -- load: many writers, searchers, a restart ----------------------------------------------------


def writer(url: str, repo: str, home: str, statements: list[str], barrier: Any, acked: Any) -> dict[str, Any]:
    """Record ``statements`` one at a time, retrying each until it is acknowledged."""
    from jupymem.core.opening import require_project
    from jupymem.errors import StorageError

    proj = require_project(repo, settings_for(Path(home), url))
    barrier.wait()
    ids, took, ack_times, retries, said = [], [], [], 0, []
    for statement in statements:
        while True:
            t = time.perf_counter()
            try:
                m = proj.remember(statement)
            except StorageError as exc:  # the server is down or restarting: the same memory again
                retries += 1
                if len(said) < 2 and str(exc) not in said:
                    said.append(str(exc))
                time.sleep(0.1)
                continue
            took.append((time.perf_counter() - t) * 1000)
            ack_times.append(time.time())
            ids.append(m.id)
            with acked.get_lock():
                acked.value += 1
            break
    return {"ids": ids, "ms": took, "ack_times": ack_times, "retries": retries, "errors": said}


def searcher(url: str, repo: str, home: str, asks: list[str], barrier: Any, stop: Any) -> dict[str, Any]:
    """Search until told to stop, through the restart."""
    from jupymem.core.opening import require_project
    from jupymem.errors import StorageError

    proj = require_project(repo, settings_for(Path(home), url))
    proj.prepare_lexical()
    barrier.wait()
    took, failed, i = [], 0, 0
    while not stop.is_set():
        q = asks[i % len(asks)]
        i += 1
        t = time.perf_counter()
        try:
            proj.search(q, mode="lexical")
        except StorageError:
            failed += 1
            time.sleep(0.1)
            continue
        took.append((time.perf_counter() - t) * 1000)
    return {"ms": took, "failed": failed}


def _call(fn: Any, out: Any, key: str, *args: Any) -> None:
    try:
        out.put((key, fn(*args)))
    except BaseException as exc:  # reported by the parent: a worker that died is a finding
        out.put((key, {"crashed": f"{type(exc).__name__}: {exc}"}))


def run_load(server: Server, url: str, base: Path, sc: Scale) -> dict[str, Any]:
    from jupymem.core.opening import close_all, require_project
    from jupymem.storage import eventlog, registry
    from jupymem.storage.postgres import admin

    repo = make_repo(base / "load-repo")
    admin.add_member(server.admin_url, registry.root_commit(repo) or "", ROLE)
    texts = corpus(sc.writers * sc.per_writer, seed=7)
    short, _ = queries(max(sc.queries, 20))
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(sc.writers + sc.searchers + 1)
    acked, stop, out = ctx.Value("i", 0), ctx.Event(), ctx.Queue()
    procs = []
    for w in range(sc.writers):
        mine = texts[w * sc.per_writer:(w + 1) * sc.per_writer]
        args = (writer, out, f"w{w}", url, str(repo), str(base / f"home-w{w}"), mine, barrier, acked)
        procs.append(ctx.Process(target=_call, args=args))
    for s in range(sc.searchers):
        args = (searcher, out, f"s{s}", url, str(repo), str(base / f"home-s{s}"), short, barrier, stop)
        procs.append(ctx.Process(target=_call, args=args))
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    barrier.wait(timeout=600)
    report: dict[str, Any] = {"started_seconds": round(time.perf_counter() - t0, 1), "load_at_start": _load()}
    t0 = time.perf_counter()
    total = sc.writers * sc.per_writer
    while acked.value < total // 2:
        time.sleep(0.02)
    restart: dict[str, Any] = {"at_acked": acked.value}
    stopped = time.time()
    server.stop()
    time.sleep(sc.down)
    server.start()
    started = time.time()
    restart["down_seconds"] = round(started - stopped, 2)
    results: dict[str, Any] = {}
    writers_left = sc.writers
    while writers_left:
        key, got = out.get(timeout=1800)
        results[key] = got
        writers_left -= key.startswith("w")
    report["writing_seconds"] = round(time.perf_counter() - t0, 1)
    stop.set()
    while len(results) < len(procs):
        key, got = out.get(timeout=120)
        results[key] = got
    for p in procs:
        p.join()
    crashed = {k: r["crashed"] for k, r in results.items() if "crashed" in r}
    ws = [r for k, r in results.items() if k.startswith("w") and "crashed" not in r]
    ss = [r for k, r in results.items() if k.startswith("s") and "crashed" not in r]
    after = sorted(t for r in ws for t in r["ack_times"] if t > started)
    restart["first_ack_after_start_seconds"] = round(after[0] - started, 2) if after else None
    restart["writers_that_retried"] = sum(1 for r in ws if r["retries"])
    restart["retries"] = sum(r["retries"] for r in ws)
    restart["messages"] = sorted({e for r in ws for e in r["errors"]})[:3]  # what a person would have read
    report["restart"] = restart

    # What the clients were told against what the database holds.
    proj = require_project(repo, settings_for(base / "home-check", url))
    told = [i for r in ws for i in r["ids"]]
    events = list(eventlog.events(proj.conn))
    records = Counter(e.payload["memory"]["id"] for e in events if e.type == "record" and e.payload)
    active = {row[0] for row in proj.conn.execute("SELECT id FROM memories WHERE status = 'active'").fetchall()}
    verified = proj.verify()
    report["counts"] = {
        "acknowledged": len(told), "expected": total, "distinct_acknowledged": len(set(told)),
        "lost": len(set(told) - active), "duplicated": sum(n - 1 for n in records.values() if n > 1),
        "events": len(events), "memories": len(active), "verify_ok": verified.ok, "crashed_workers": crashed,
    }
    report["record"] = {**_ms([m for r in ws for m in r["ms"]]), "writers": sc.writers}
    report["search_under_load"] = {**_ms([m for r in ss for m in r["ms"]]), "searchers": sc.searchers,
                                   "failed_during_restart": sum(r["failed"] for r in ss)}
    report["load_at_end"] = _load()
    report["repo"] = str(repo)
    close_all()
    return report


def run_oldest(url: str, base: Path, repo: str, sc: Scale) -> dict[str, Any]:
    """Search the load's project again once every other project has written after it: its
    memories' row ids now lie under everyone else's newer ones (one table for all projects)."""
    from jupymem.core.opening import close_all, require_project

    proj = require_project(repo, settings_for(base / "home-oldest", url))
    proj.prepare_lexical()
    short, _ = queries(sc.queries)
    took = []
    for q in short:
        t = time.perf_counter()
        proj.search(q, mode="lexical")
        took.append((time.perf_counter() - t) * 1000)
    rows = proj.conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    close_all()
    return {"memories": rows, "search": _ms(took), "load_at_end": _load()}


# -- spread: many projects ------------------------------------------------------------------


def run_spread(server: Server, url: str, base: Path, sc: Scale) -> dict[str, Any]:
    import jupymem
    from jupymem.core.opening import close_all, require_project
    from jupymem.storage import registry
    from jupymem.storage.postgres import admin

    settings = settings_for(base / "home-spread", url)
    repos = []
    t = time.perf_counter()
    for p in range(sc.projects):
        repo = make_repo(base / "spread" / f"r{p:03d}")
        admin.add_member(server.admin_url, registry.root_commit(repo) or "", ROLE)
        proj = require_project(repo, settings)
        texts = corpus(sc.per_project, seed=1000 + p)
        for i in range(0, len(texts), 1000):
            proj.remember_many({"statement": s, "kind": "fact"} for s in texts[i:i + 1000])
        repos.append(repo)
        close_all()  # one connection at a time, as one person's processes would hold
    report: dict[str, Any] = {
        "projects": sc.projects, "per_project": sc.per_project, "memories": sc.projects * sc.per_project,
        "ingest_seconds": round(time.perf_counter() - t, 1), "load_after_ingest": _load(),
    }
    short, prompts = queries(sc.queries)
    sample = repos[:: max(1, len(repos) // 5)][:5]
    first, search_ms, context_ms = [], [], []
    per_project: dict[str, float] = {}  # an older project's rids lie under everyone else's newer ones
    for repo in sample:
        proj = require_project(repo, settings)
        t = time.perf_counter()
        proj.prepare_lexical()
        first.append((time.perf_counter() - t) * 1000)
        jupymem.context(prompts[0], repo, settings=settings)  # the block, made once
        mine = []
        for q, prompt in zip(short, prompts):
            t = time.perf_counter()
            proj.search(q, mode="lexical")
            mine.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            jupymem.context(prompt, repo, settings=settings)
            context_ms.append((time.perf_counter() - t) * 1000)
        search_ms += mine
        per_project[repo.name] = round(statistics.median(mine), 2)
        close_all()
    report["index_build_ms_p50"] = round(statistics.median(first), 1)
    report["search"] = {**_ms(search_ms), "projects_sampled": len(sample), "p50_ms_by_project": per_project}
    report["context_for_prompt"] = _ms(context_ms)
    report["load_at_end"] = _load()
    return report


# -- one project: PostgreSQL beside SQLite ----------------------------------------------------------


def run_one(server: Server, url: str, base: Path, sc: Scale) -> dict[str, Any]:
    from jupymem.core.opening import close_all, init_project, require_project
    from jupymem.storage import registry
    from jupymem.storage.postgres import admin

    texts = corpus(sc.one_project, seed=99)
    projects: dict[str, Any] = {}
    report: dict[str, Any] = {"memories": sc.one_project}
    for engine in ("sqlite", "postgresql"):
        repo = make_repo(base / f"one-{engine}")
        if engine == "postgresql":
            admin.add_member(server.admin_url, registry.root_commit(repo) or "", ROLE)
            proj = require_project(repo, settings_for(base / "home-one-pg", url))
        else:
            proj = init_project(repo, settings_for(base / "home-one-sqlite", None))
        t = time.perf_counter()
        for i in range(0, len(texts), 1000):
            proj.remember_many({"statement": s, "kind": "fact"} for s in texts[i:i + 1000])
        report[f"{engine}_ingest_seconds"] = round(time.perf_counter() - t, 1)
        t = time.perf_counter()
        proj.prepare_lexical()
        report[f"{engine}_index_build_ms"] = round((time.perf_counter() - t) * 1000, 1)
        projects[engine] = proj
    short, prompts = queries(sc.queries)
    asks = short + prompts
    took: dict[str, list[float]] = {"sqlite": [], "postgresql": []}
    same = 0
    for n, q in enumerate(asks):
        order = ("sqlite", "postgresql") if n % 2 == 0 else ("postgresql", "sqlite")
        ranked = {}
        for engine in order:
            t = time.perf_counter()
            result = projects[engine].search(q, mode="lexical")
            took[engine].append((time.perf_counter() - t) * 1000)
            ranked[engine] = [h.memory.id for h in result.hits]
        same += ranked["sqlite"] == ranked["postgresql"]
    report["queries"] = len(asks)
    report["same_ranking"] = same
    report["sqlite"] = _ms(took["sqlite"])
    report["postgresql"] = _ms(took["postgresql"])
    s, p = report["sqlite"]["p50_ms"], report["postgresql"]["p50_ms"]
    report["ratio_p50"] = round(p / s, 2) if s else None
    report["load_at_end"] = _load()
    close_all()
    return report


# -- the run ----------------------------------------------------------------------------------


def targets(r: dict[str, Any]) -> dict[str, bool | None]:
    load, spread, one = r.get("load"), r.get("spread"), r.get("one_project")
    out: dict[str, bool | None] = {}
    if load:
        c = load["counts"]
        out["none_lost_none_duplicated_verify_ok"] = (c["lost"] == 0 and c["duplicated"] == 0 and c["verify_ok"]
                                                      and c["distinct_acknowledged"] == c["expected"]
                                                      and not c["crashed_workers"])
        out["record_p50_under_10ms"] = (load["record"]["p50_ms"] or 1e9) < 10
    if spread:
        out["search_p50_under_50ms"] = (spread["search"]["p50_ms"] or 1e9) < 50
        out["context_p50_under_20ms"] = (spread["context_for_prompt"]["p50_ms"] or 1e9) < 20
    if one:
        out["postgresql_within_2x_of_sqlite"] = one["ratio_p50"] is not None and one["ratio_p50"] <= 2
    return out


def run(sc: Scale, parts: list[str]) -> dict[str, Any]:
    from jupymem.storage.postgres import admin

    base = Path(tempfile.mkdtemp(prefix="jupymem-bench-team-"))
    os.environ.update(GIT_ENV)  # the writers' git identity (inherited by spawned processes)
    report: dict[str, Any] = {"scale": asdict(sc), "load_average_before": _load(), "cpus": os.cpu_count()}
    server = Server(base / "pg")
    try:
        admin.create_schema(server.admin_url)
        admin.create_user(server.admin_url, ROLE, password=PASSWORD)
        url = server.user_url(ROLE, PASSWORD)
        for name, fn in (("load", run_load), ("spread", run_spread), ("one_project", run_one)):
            if name in parts:
                t = time.perf_counter()
                report[name] = fn(server, url, base, sc)
                report[name]["seconds"] = round(time.perf_counter() - t, 1)
        if "load" in parts and len(parts) > 1:
            report["oldest_project"] = run_oldest(url, base, report["load"]["repo"], sc)
    finally:
        server.close()
        shutil.rmtree(base, ignore_errors=True)
    report["targets"] = targets(report)
    if sc != SCALES["full"]:
        report["targets_note"] = "the issue's targets are set for --scale full's sizes; at these sizes they show the shape only"
    report["load_average_after"] = _load()
    return report


def format_report(r: dict[str, Any]) -> str:
    lines = [f"scale {r['scale']}; load average before {r['load_average_before']}, after {r['load_average_after']}"]
    if "load" in r:
        ld = r["load"]
        lines += [
            f"load: {ld['record']['writers']} writers x {r['scale']['per_writer']}, {ld['search_under_load']['searchers']}"
            f" searchers, restart {ld['restart']} ({ld['seconds']} s, load {ld['load_at_end']})",
            f"  counts {ld['counts']}",
            f"  record p50 {ld['record']['p50_ms']} ms p95 {ld['record']['p95_ms']} ms;"
            f" search under load p50 {ld['search_under_load']['p50_ms']} ms (n={ld['search_under_load']['n']})",
        ]
    if "spread" in r:
        sp = r["spread"]
        lines.append(f"spread: {sp['memories']:,} memories in {sp['projects']} projects (ingest {sp['ingest_seconds']} s):"
                     f" search p50 {sp['search']['p50_ms']} ms p95 {sp['search']['p95_ms']} ms; context for a prompt"
                     f" p50 {sp['context_for_prompt']['p50_ms']} ms; index build p50 {sp['index_build_ms_p50']} ms"
                     f" (load {sp['load_at_end']}); by project, oldest first: {sp['search']['p50_ms_by_project']}")
    if "one_project" in r:
        o = r["one_project"]
        lines.append(f"one project, {o['memories']:,} memories: search p50 sqlite {o['sqlite']['p50_ms']} ms,"
                     f" postgresql {o['postgresql']['p50_ms']} ms, ratio {o['ratio_p50']}; same ranking"
                     f" {o['same_ranking']}/{o['queries']} (load {o['load_at_end']})")
    if "oldest_project" in r:
        o = r["oldest_project"]
        lines.append(f"the load's project ({o['memories']:,} memories) searched again after the others wrote:"
                     f" p50 {o['search']['p50_ms']} ms p95 {o['search']['p95_ms']} ms (load {o['load_at_end']})")
    lines.append(f"targets: {r['targets']}" + (f" ({r['targets_note']})" if "targets_note" in r else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", choices=sorted(SCALES), default="small")
    ap.add_argument("--parts", default="load,spread,one_project", help="comma-separated: load, spread, one_project")
    for field in ("writers", "per_writer", "searchers", "projects", "per_project", "one_project", "queries"):
        ap.add_argument(f"--{field.replace('_', '-')}", type=int, help=f"override the scale's {field}")
    ap.add_argument("--down", type=float, help="seconds the server stays down in the restart")
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = ap.parse_args(argv)
    sc = SCALES[args.scale]
    overrides = {k: getattr(args, k) for k in asdict(sc) if getattr(args, k, None) is not None}
    sc = replace(sc, **overrides)
    report = run(sc, [p.strip() for p in args.parts.split(",") if p.strip()])
    report["command"] = " ".join(["benchmarks/bench_team.py", *(argv if argv is not None else sys.argv[1:])])
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
