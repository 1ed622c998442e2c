"""Serve one GGUF on 127.0.0.1 with llama.cpp's OpenAI-compatible server (xllamacpp).

Run by ``run.py`` with the server venv's python (``models.install_server``), under
``nice -n 15`` and ``OMP_WAIT_POLICY=PASSIVE`` (idle threads sleep instead of spinning:
~6x faster on a shared 2-core machine). It prints ``listening <url>`` and serves until it
is killed. Defaults chosen for the benchmark:

* temperature 0 and top_k 1 (greedy): the same request gets the same answer, so a
  difference between conditions is the memory's, not sampling's;
* ``n_predict`` caps every answer (the ``%%ask`` magic passes no ``max_tokens``);
* one slot with the prompt cache on: the stable prefix (instructions, block, tool
  schemas) is computed once and reused, which is what makes the memory conditions
  affordable on 2 cores; ``cache_ram_mib`` keeps several prefixes (one per condition).
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--alias", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--ctx", type=int, default=8192)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=320)
    args = ap.parse_args()

    import xllamacpp as xlc

    p = xlc.CommonParams()
    p.model.path = args.model
    p.model_alias = args.alias
    p.hostnames = ["127.0.0.1"]  # loopback only
    p.port = args.port
    p.n_ctx = args.ctx
    p.n_parallel = 1
    p.n_predict = args.max_tokens
    p.cpuparams.n_threads = args.threads
    p.cpuparams_batch.n_threads = args.threads
    p.cache_prompt = True
    p.use_jinja = True  # the model's own chat template, with tool calls
    p.sampling.temp = 0.0
    p.sampling.top_k = 1
    p.sampling.seed = 42
    server = xlc.Server(p)
    print("listening", server.listening_address, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
