"""A progress bar in the notebook while the transformer embeds a large project.

Embedding 100,000 memories takes minutes on two cores; the kernel stays responsive (a
background thread does it, and the static tier answers meanwhile), but a person should
see that it is happening and when the better search takes over. So the first search of a
large project whose vectors are being made shows an ``ipywidgets`` bar, moved by a daemon
thread that reads the index's progress twice a second and stops when it is done. ipykernel
sends widget updates from any thread (its iopub socket has its own thread), so the bar
moves while cells run. Outside a kernel with widgets nothing is shown (``status`` says
the same in words).
"""

from __future__ import annotations

import threading
import time
from typing import Any

# Smaller projects are embedded in a few seconds: a bar would only flash.
SHOW_FROM = 2_000
_shown: set[str] = set()  # project ids that have their bar in this kernel
_lock = threading.Lock()


def show_embedding(project: Any) -> bool:
    """Show (once per project and kernel) a bar for the transformer's background
    embedding, if one is running over at least ``SHOW_FROM`` memories. True when shown."""
    tiers = project.engine.made_tiers
    dense = tiers.transformer_index() if tiers is not None else None
    if dense is None:
        return False
    done, total = dense.progress
    if total < SHOW_FROM:
        return False
    with _lock:
        if project.id in _shown:
            return False
        _shown.add(project.id)
    try:
        import ipywidgets as widgets
        from IPython.display import display
    except ImportError:
        return False
    bar = widgets.IntProgress(value=done, min=0, max=total, description="meaning", bar_style="info")
    label = widgets.Label(_said(done, total))
    display(widgets.HBox([bar, label]))
    threading.Thread(target=_follow, args=(dense, bar, label, project.id), name="jupymem-progress", daemon=True).start()
    return True


def _said(done: int, total: int) -> str:
    return f"the transformer is embedding memories: {done:,} of {total:,} (the static model answers meanwhile)"


def _follow(dense: Any, bar: Any, label: Any, project_id: str) -> None:
    try:
        while True:
            done, total = dense.progress
            if not total:  # the backfill ended
                bar.value, bar.bar_style = bar.max, "success"
                label.value = "the transformer has every memory: searches use it now"
                if dense.error:
                    bar.bar_style, label.value = "danger", f"embedding stopped: {dense.error}"
                return
            bar.max, bar.value = total, done
            label.value = _said(done, total)
            time.sleep(0.5)
    finally:
        with _lock:
            _shown.discard(project_id)
