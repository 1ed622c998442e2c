"""A progress bar in the notebook while the transformer loads and embeds memories.

The first search of a kernel starts the encoders loading in the background: the static
model first (under a second), then the transformer (a few seconds), which then embeds the
project's memories (minutes for 100,000 on two cores) and takes over searches once every
memory has its vector. The kernel stays responsive meanwhile (background threads; the
static tier answers), but a person should see that the better search is coming and when
it has come, whatever the project's size: a project of one memory waits for the
transformer's load as long as a large one. So that first search shows an ``ipywidgets``
bar, moved by a daemon thread that reads the progress twice a second and stops when the
transformer answers or fails. ipykernel sends widget updates from any thread (its iopub
socket has its own thread), so the bar moves while cells run. Outside a kernel with
widgets nothing is shown (``%memory status`` says the same in words).
"""

from __future__ import annotations

import threading
import time
from typing import Any

_shown: set[str] = set()  # project ids that have their bar in this kernel
_lock = threading.Lock()
POLL = 0.5  # seconds between looks at the progress
GIVE_UP = 1800.0  # a bar still moving after half an hour says so and stops following


def show_embedding(project: Any) -> bool:
    """Show (once per project and kernel, while it is not done) a bar for the transformer's
    background load and embedding. True when shown."""
    from ..core.overview import dense_now

    tiers = project.engine.made_tiers
    if tiers is None or not tiers.plan.transformer:
        return False  # no search yet, or no transformer in this process's plan
    state = _state(dense_now(project))
    if state[0] in ("done", "failed"):
        return False
    with _lock:
        if project.id in _shown:
            return False
        _shown.add(project.id)
    try:
        import ipywidgets as widgets
        from IPython.display import display
    except ImportError:
        with _lock:
            _shown.discard(project.id)
        return False
    _, done, total, said = state
    bar = widgets.IntProgress(value=done, min=0, max=max(total, 1), description="meaning", bar_style="info")
    label = widgets.Label(said)
    display(widgets.HBox([bar, label]))
    threading.Thread(target=_follow, args=(project, bar, label), name="jupymem-progress", daemon=True).start()
    return True


def _state(s: Any) -> tuple[str, int, int, str]:
    """(phase, done, total, what to say) from a ``DenseStatus``."""
    if s.embedding and s.embedding.total:
        done, total = s.embedding.done, s.embedding.total
        return ("embedding", done, total,
                f"the transformer is embedding memories: {done:,} of {total:,} (the static model answers meanwhile)")
    if s.tier == "transformer":
        return ("done", 1, 1, "the transformer answers searches now")
    if s.transformer == "failed":
        return ("failed", 0, 1, f"the transformer did not load: {s.reason or 'see %memory status'}")
    answering = "the static model answers meanwhile" if s.tier == "static" else "words answer meanwhile"
    return ("loading", 0, 1, f"the transformer is loading ({answering})")


def _follow(project: Any, bar: Any, label: Any) -> None:
    from ..core.overview import dense_now

    started = time.monotonic()
    try:
        while True:
            phase, done, total, said = _state(dense_now(project))
            bar.max, bar.value, label.value = max(total, 1), done, said
            if phase == "done":
                bar.value, bar.bar_style = bar.max, "success"
                return
            if phase == "failed":
                bar.bar_style = "danger"
                return
            if time.monotonic() - started > GIVE_UP:
                label.value = said + "; `%memory status` follows it from here"
                return
            time.sleep(POLL)
    except Exception as exc:  # a bar must never raise in its thread; say why it stopped
        label.value = f"progress unknown: {exc}"
    finally:
        with _lock:
            _shown.discard(project.id)
