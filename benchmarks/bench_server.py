"""REST and sidebar speed (issue [3 of 4]).

- API: p50 of ``GET memories`` (list) and ``GET memories?q=`` (search) against
  a real ``jupyter server`` with 10,000 memories (target: under 50 ms each).
- Sidebar: first paint of 1,000 memories after the API answers, measured in
  headless Chromium with the sidebar's own performance marks
  (``jupymem:list-received`` -> ``jupymem:list-painted``; target: under 300 ms),
  over fresh page loads. The first paint shows 25 rows per kind; the time until
  all rows are painted (``jupymem:all-rows``) is reported beside it. Also leaves a dark-theme screenshot in test-artifacts/.

Run: ``python benchmarks/bench_server.py [--memories 10000] [--paint-memories 1000]``.
Needs the built labextension and /usr/bin/chromium (for the paint part).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
LABEXTENSION = REPO_ROOT / "jupymem" / "labextension"
CHROMIUM = "/usr/bin/chromium"
TOKEN = "bench-token"

WORDS = (
    "revenue customer order invoice churn cohort region forecast margin discount refund shipment "
    "warehouse supplier currency ledger quarter fiscal segment funnel retention campaign basket "
    "sku price tax audit schema column index partition backfill pipeline model feature label "
    "sample holdout baseline metric dashboard alert latency outlier null duplicate timezone"
).split()
KINDS = ("correction", "constraint", "preference", "decision", "procedure", "failure", "fact", "note")


def statements(n: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words = rng.sample(WORDS, 8)
        out.append(
            {
                "statement": f"{words[0].capitalize()} {' '.join(words[1:])} rule {i}",
                "kind": KINDS[i % len(KINDS)],
                "topic": words[0],
            }
        )
    return out


def make_repo(path: Path) -> Path:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=env)
    subprocess.run(["git", "-C", str(path), "commit", "-q", "--allow-empty", "-m", "first"], check=True, env=env)
    return path.resolve()


def populate(repo: Path, n: int) -> None:
    import jupymem

    proj = jupymem.init(repo)
    items = statements(n)
    for start in range(0, n, 2000):
        proj.remember_many(items[start : start + 2000])
    assert sum(proj.counts().values()) == n, proj.counts()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve(app: str, root: Path, work: Path, extra_env: dict[str, str] | None = None) -> Iterator[str]:
    config = work / f"config-{app}"
    config.mkdir(exist_ok=True)
    (config / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": {"jpserver_extensions": {"jupymem": True}}})
    )
    labext = work / "labextensions"
    if not labext.exists():
        labext.mkdir()
        (labext / "jupymem").symlink_to(LABEXTENSION, target_is_directory=True)
    port = free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_RUNTIME_DIR": str(work / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(work / f"workspaces-{port}"),
        **(extra_env or {}),
    }
    cmd = [
        sys.executable, "-m", app, "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
        f"--ServerApp.token={TOKEN}", f"--ServerApp.root_dir={root}",
    ]
    if app == "jupyterlab":
        cmd += [f"--LabApp.extra_labextensions_path={labext}", "--LabApp.news_url="]
    log = (work / f"{app}-{port}.log").open("wb")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/jupymem/api/status?token={TOKEN}", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"{app} did not start; see {log.name}") from None
                time.sleep(0.25)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def get(url: str, route: str, **params: str) -> tuple[float, bytes]:
    query = urllib.parse.urlencode(params)
    req = urllib.request.Request(f"{url}/jupymem/api/{route}?{query}", headers={"Authorization": f"token {TOKEN}"})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=60) as r:
        body = r.read()
    return (time.perf_counter() - t0) * 1000, body


def bench_api(n: int, work: Path, rounds: int) -> dict[str, float]:
    root = work / "root-api"
    root.mkdir()
    repo = make_repo(root / "big")
    t0 = time.perf_counter()
    populate(repo, n)
    print(f"populated {n} memories in {time.perf_counter() - t0:.1f} s")
    import jupymem

    proj = jupymem.project(repo)
    core = []
    for _ in range(7):
        t1 = time.perf_counter()
        proj.list()
        core.append((time.perf_counter() - t1) * 1000)
    # A list page can be no faster than this until the core pages in SQL.
    print(f"core Project.list() of all {n}: p50 {statistics.median(core):.1f} ms (in process)")
    rng = random.Random(3)
    queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(rounds)]
    results: dict[str, float] = {}
    with serve("jupyter_server", root, work) as url:
        get(url, "memories", path="big")  # warm: open the database, fill caches
        get(url, "memories", path="big", q="revenue")
        timings: dict[str, list[float]] = {
            "list (default page)": [], "list limit=1000": [], "list all": [], "search": [], "status": [], "block": []
        }
        size = 0
        for q in queries:
            ms, body = get(url, "memories", path="big")
            timings["list (default page)"].append(ms)
            size = len(body)
            timings["list limit=1000"].append(get(url, "memories", path="big", limit="1000")[0])
            timings["list all"].append(get(url, "memories", path="big", limit=str(n))[0])
            timings["search"].append(get(url, "memories", path="big", q=q)[0])
            timings["status"].append(get(url, "status", path="big")[0])
            timings["block"].append(get(url, "block", path="big")[0])
        for name, values in timings.items():
            results[name] = statistics.median(values)
            print(f"API {name:18s} p50 {results[name]:7.1f} ms   (n={len(values)})")
        print(f"    default page response: {size / 1e6:.2f} MB")
    return results


def bench_paint(n: int, work: Path, loads: int) -> list[float]:
    from playwright.sync_api import sync_playwright

    root = work / "root-paint"
    root.mkdir()
    repo = make_repo(root / "thousand")
    populate(repo, n)
    settings = work / "lab-settings"
    (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "apputils-extension" / "themes.jupyterlab-settings").write_text(
        json.dumps({"theme": "JupyterLab Dark"})
    )
    paints: list[float] = []
    everything: list[float] = []
    with serve("jupyterlab", root, work, {"JUPYTERLAB_SETTINGS_DIR": str(settings)}) as url:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=CHROMIUM,
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                      "--disable-sync", "--no-first-run"],
            )
            try:
                for i in range(loads):
                    page = browser.new_page(viewport={"width": 1400, "height": 900})
                    page.goto(f"{url}/lab/tree/thousand?token={TOKEN}&reset")
                    tab = page.locator('.jp-SideBar .lm-TabBar-tab[data-id="jupymem-sidebar"]')
                    tab.wait_for(timeout=60_000)
                    if "lm-mod-current" not in (tab.get_attribute("class") or ""):
                        tab.click()
                    page.locator("#jupymem-sidebar .jp-jupymem-row").first.wait_for(timeout=30_000)
                    page.wait_for_function(
                        "performance.getEntriesByName('jupymem:first-paint').length > 0", timeout=30_000
                    )
                    ms = page.evaluate("performance.getEntriesByName('jupymem:first-paint')[0].duration")
                    page.wait_for_function(
                        "performance.getEntriesByName('jupymem:all-rows').length > 0", timeout=30_000
                    )
                    all_ms = page.evaluate("performance.getEntriesByName('jupymem:all-rows')[0].duration")
                    rows = page.locator("#jupymem-sidebar .jp-jupymem-row").count()
                    paints.append(ms)
                    everything.append(all_ms)
                    print(
                        f"sidebar first paint #{i + 1}: {ms:6.1f} ms (25 rows per kind); "
                        f"all {rows} rows painted at {all_ms:6.1f} ms"
                    )
                    if i == 0:
                        out = REPO_ROOT / "test-artifacts"
                        out.mkdir(exist_ok=True)
                        page.locator("#jupymem-sidebar").screenshot(path=str(out / "sidebar-dark-1000.png"))
                    page.close()
            finally:
                browser.close()
    print(f"sidebar first paint p50 {statistics.median(paints):.1f} ms over {len(paints)} page loads ({n} memories)")
    print(f"sidebar all rows painted p50 {statistics.median(everything):.1f} ms")
    return paints


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--paint-memories", type=int, default=1_000)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--loads", type=int, default=5)
    ap.add_argument("--skip-paint", action="store_true")
    ap.add_argument("--skip-api", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="jupymem-bench-") as tmp:
        work = Path(tmp)
        os.environ["JUPYMEM_HOME"] = str(work / "home")
        os.environ.setdefault("JUPYMEM_ENCODER", "none")
        if not args.skip_api:
            bench_api(args.memories, work, args.rounds)
        if not args.skip_paint:
            if not Path(CHROMIUM).exists() or not (LABEXTENSION / "package.json").exists():
                print("skipping the sidebar paint: needs /usr/bin/chromium and the built labextension")
            else:
                bench_paint(args.paint_memories, work, args.loads)


if __name__ == "__main__":
    main()
