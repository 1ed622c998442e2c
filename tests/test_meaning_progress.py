"""The transformer's load as a notebook sees it (issue 33), in a real kernel with the
default encoders: the first search starts it and shows its progress, whatever the
project's size (a bar appeared only past 2,000 memories), and ``%memory status`` never
says "loading the bundled model" once nothing is loading (it did for 35 s, until the
next search). The sidebar's side is tests/test_sidebar_issue33_e2e.py."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import KernelManager

import jupymem
from jupymem.core.opening import close_all

pytestmark = pytest.mark.kernel

WIDGET = "application/vnd.jupyter.widget-view+json"


class Kernel:
    """A real ipykernel in ``cwd``; ``run`` returns a cell's outputs and the widget updates seen."""

    def __init__(self, cwd: Path):
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(cwd=str(cwd))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        self.updates: list[dict[str, Any]] = []  # every widget state update, in order

    def run(self, code: str, timeout: float = 120) -> list[dict[str, Any]]:
        msg_id = self.kc.execute(code)
        outputs: list[dict[str, Any]] = []
        while True:
            msg = self.kc.get_iopub_msg(timeout=timeout)
            kind, content = msg["msg_type"], msg["content"]
            if kind == "comm_msg" and content.get("data", {}).get("method") == "update":
                self.updates.append(content["data"].get("state", {}))
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if kind in ("display_data", "execute_result", "stream", "error"):
                outputs.append({"type": kind, **content})
            elif kind == "status" and content["execution_state"] == "idle":
                return outputs

    def text(self, code: str) -> str:
        out = self.run(code)
        errors = [o for o in out if o["type"] == "error"]
        assert not errors, errors
        return "\n".join(o.get("text") or o.get("data", {}).get("text/plain", "") for o in out)

    def drain(self, seconds: float) -> None:
        """Widget updates sent by the kernel's threads meanwhile."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                msg = self.kc.get_iopub_msg(timeout=max(0.05, end - time.monotonic()))
            except Exception:  # queue.Empty: nothing more came
                continue
            content = msg["content"]
            if msg["msg_type"] == "comm_msg" and content.get("data", {}).get("method") == "update":
                self.updates.append(content["data"].get("state", {}))

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


@pytest.fixture
def kernel(repo: Path, transformer_encoder: None) -> Any:
    proj = jupymem.init(repo)
    proj.remember("Revenue is reported in EUR, never USD", kind="constraint")
    close_all()  # the kernel opens it on its own
    k = Kernel(repo)
    try:
        yield k
    finally:
        k.close()


def test_the_first_search_shows_the_transformer_coming_and_status_follows_it(kernel: Kernel) -> None:
    kernel.text("%load_ext jupymem")
    first = kernel.run("%memory search revenue currency")
    # One memory, and still a bar: the transformer's load is as long for one as for many.
    assert any(WIDGET in o.get("data", {}) for o in first), first
    said = [s.get("value") for s in kernel.updates if isinstance(s.get("value"), str)]
    # Until the transformer answers, status says what is loading; then what answers, and no
    # "loading" while idle (no second search).
    deadline = time.monotonic() + 180
    status = ""
    while time.monotonic() < deadline:
        status = kernel.text("%memory status")
        if "(transformer encoder)" in status:
            break
        time.sleep(1)
    assert "(transformer encoder)" in status, status
    kernel.drain(2)
    said = [s.get("value") for s in kernel.updates if isinstance(s.get("value"), str)]
    assert "the transformer answers searches now" in said, said
    time.sleep(3)
    idle = kernel.text("%memory status")
    assert "loading" not in idle and "(transformer encoder)" in idle, idle
