"""This kernel's side of jupymem: where it is, its session, its staged failures, the hook.

Both notebook faces need it (``magics`` for ``%memory``/``%%remember``, ``ask``
for ``%%ask``), so it lives here and neither imports the other. Per shell there
is one ``KernelState`` (``state(shell)``): the session id, the window of the 64
newest staged failures, the ``pairing`` that finds their fixes, and the
``post_run_cell`` hook. The hook is hot and kept cheap:

* on a successful cell it returns at once when no failure waits for its fix
  (one attribute test); while something waits, a success costs a dict lookup by
  cell id, or without cell ids a comparison with the few newest waiting failures;
* a failure is diagnosed, kept in this session's window, staged in the project
  database when the repository already has memory (staging never creates
  memory), and named in one dim line (its ``ev-`` handle and how to cite it)
  unless ``JUPYMEM_QUIET=1`` or ``%memory quiet``. It then waits for the run that
  fixes it (``pairing``); a pair is written back to the window and the database,
  and with ``JUPYMEM_MODEL`` set a model rewrites its suggested lesson in a
  background thread, never holding up a cell.

Loading the extension imports only this module, ``magics`` and the records: the
core, rendering and failure diagnosis are imported when first needed.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import os
import re
import threading
import uuid
from pathlib import Path
from typing import Any

from ..config import Settings
from ..models import Evidence, Provenance, Recorder

log = logging.getLogger("jupymem")

WINDOW = 64
# Memory's own cells: never evidence, and never the fix of a failure.
OWN_CELL = re.compile(r"\s*(?:%memory|%%memory|%%remember|%%ask)\b")


class _NothingWaits:
    """Stands in for ``pairing.Pairing`` until the first failure imports it."""

    waiting = False


_NOTHING_WAITS = _NothingWaits()


# -- where this kernel is ----------------------------------------------------------


def current_path(shell: Any) -> Path:
    """The kernel's notebook (``JPY_SESSION_NAME`` / ``__session__``), else the cwd."""
    name = os.environ.get("JPY_SESSION_NAME") or (getattr(shell, "user_ns", {}) or {}).get("__session__")
    cwd = Path.cwd()
    if isinstance(name, str) and name.strip():
        p = Path(name).expanduser()
        # Jupyter gives the path relative to the server root, while the kernel
        # runs in the notebook's directory: try it as given, then by its name.
        for candidate in (p, cwd / p, cwd / p.name) if not p.is_absolute() else (p,):
            if candidate.exists():
                return candidate.resolve()
    return cwd


def cell_id(shell: Any) -> str | None:
    """The running cell's id, where the front end sends one (JupyterLab does)."""
    get_parent = getattr(shell, "get_parent", None)
    try:
        parent = get_parent() if callable(get_parent) else None
    except Exception:  # outside a kernel there is no parent message
        return None
    meta = (parent or {}).get("metadata") or {}
    value = meta.get("cellId")
    return value if isinstance(value, str) else None


def execution_count(shell: Any) -> int | None:
    """The running cell's execution count."""
    # The running cell's result is the reliable source: IPython 9 bumps
    # shell.execution_count before running a cell, IPython 8 after.
    result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
    count = getattr(result, "execution_count", None)
    return count if isinstance(count, int) else getattr(shell, "execution_count", None)


def in_kernel(shell: Any) -> bool:
    """True in a Jupyter kernel (rich output), False in terminal IPython."""
    return getattr(shell, "kernel", None) is not None


class KernelState:
    """Per shell: the session id, the window of staged failures, the hook."""

    def __init__(self, shell: Any):
        self.shell = shell
        kernel = getattr(shell, "kernel", None)
        session = getattr(getattr(kernel, "session", None), "session", None)
        self.session: str = session if isinstance(session, str) and session else uuid.uuid4().hex
        self.window: collections.deque[Evidence] = collections.deque(maxlen=WINDOW)
        # This session's failures waiting for their fix (pairing.Pairing, made on the first failure).
        self.pairing: Any = _NOTHING_WAITS
        # None: JUPYMEM_QUIET decides; True/False: `%memory quiet` / `%memory quiet off` did.
        self.quiet: bool | None = None
        self._lock = threading.Lock()  # the window is also written by the suggestion thread
        self._suggesting: list[threading.Thread] = []

    def settings(self) -> Settings:
        return Settings.from_env()

    def notebook(self) -> str | None:
        p = current_path(self.shell)
        return str(p) if p.is_file() else None

    def project(self, create: bool = False, database_url: str | None = None) -> Any:
        from ..core.opening import find_project, init_project

        path = current_path(self.shell)
        if create:
            return init_project(path, self.settings(), database_url=database_url)
        return find_project(path, self.settings())

    def provenance(self, recorder: Recorder = "person") -> Provenance:
        return Provenance(
            recorder=recorder,
            notebook=self.notebook(),
            cell_id=cell_id(self.shell),
            execution_count=execution_count(self.shell),
            session=self.session,
        )

    def is_quiet(self) -> bool:
        return self.settings().quiet if self.quiet is None else self.quiet

    # The hook. On success: one attribute test, or two while a failure waits for its fix.
    def post_run_cell(self, result: Any) -> None:
        if result.error_in_exec is None and result.error_before_exec is None:
            if self.pairing.waiting:
                self._succeeded(result)
            return
        try:
            ev = self._stage(result)
        except Exception as exc:  # a broken hook must never break the user's cell
            log.warning("jupymem: could not stage this failure: %s", exc)
            return
        if ev is not None and not self.is_quiet():
            self._announce(ev)

    def _announce(self, ev: Evidence) -> None:
        """One dim line under the traceback: the handle, and how to cite it."""
        from IPython.display import display

        from .render import Output, staged_html, staged_text

        try:
            if in_kernel(self.shell):
                display(Output(staged_text(ev), staged_html(ev)))
            else:  # a terminal: ANSI faint, and nothing else
                print(f"\x1b[2m{staged_text(ev)}\x1b[0m")
        except Exception as exc:  # a notice must never break the user's cell
            log.warning("jupymem: could not show the staged failure %s: %s", ev.handle, exc)

    def _succeeded(self, result: Any) -> None:
        try:
            info = result.info
            source = info.raw_cell or ""
            if OWN_CELL.match(source):
                return  # memory's own operations fix nothing
            paired = self.pairing.succeeded(source, getattr(info, "cell_id", None), result.execution_count)
            if paired:
                self._keep_pairs(paired)
        except Exception as exc:  # a broken hook must never break the user's cell
            log.warning("jupymem: could not pair this cell with the failure it fixed: %s", exc)

    def _keep_pairs(self, paired: list[Evidence]) -> None:
        """Write fixed failures back to the window and, where memory exists, the database."""
        self._replace(paired)
        proj = self.project()
        if proj is not None:
            proj.stage_failure(*paired)
        model = self.settings().model
        if model:
            thread = threading.Thread(
                target=self._model_suggestions, args=(paired, model), name="jupymem-suggest", daemon=True
            )
            self._suggesting.append(thread)
            thread.start()

    def _replace(self, changed: list[Evidence]) -> None:
        by_handle = {e.handle: e for e in changed}
        with self._lock:
            for i, e in enumerate(self.window):
                if e.handle in by_handle:
                    self.window[i] = by_handle[e.handle]

    def _model_suggestions(self, paired: list[Evidence], model: str) -> None:
        """In a background thread: the model rewrites each pair's suggested lesson."""
        from ..intake.llm import suggest_lesson

        for ev in paired:
            try:
                text = suggest_lesson(ev, model)
                with self._lock:
                    current = next((e for e in self.window if e.handle == ev.handle), ev)
                better = dataclasses.replace(current, suggestion=text, suggested_by=model)
                self._replace([better])
                proj = self.project()
                if proj is not None:
                    proj.stage_failure(better)
            except Exception as exc:  # the pair keeps its own suggestion; say why once
                log.warning("jupymem: the model could not suggest a lesson for %s: %s", ev.handle, exc)
                return

    def wait_for_suggestions(self, timeout: float | None = None) -> bool:
        """Wait for the model's suggestions in flight; True when none is left running."""
        for thread in list(self._suggesting):
            thread.join(timeout)
        self._suggesting = [t for t in self._suggesting if t.is_alive()]
        return not self._suggesting

    def _stage(self, result: Any) -> Evidence | None:
        exc = result.error_in_exec or result.error_before_exec
        info = getattr(result, "info", None)
        source = getattr(info, "raw_cell", "") or ""
        if OWN_CELL.match(source):
            return None  # memory's own operations are never evidence
        from ..intake.capture import evidence_from_exception, raising_line

        ev = evidence_from_exception(
            exc,
            source=source,
            session=self.session,
            cell_id=getattr(info, "cell_id", None),
            execution_count=getattr(result, "execution_count", None),
            notebook=self.notebook(),
        )
        if ev is None:
            return None
        if self.pairing is _NOTHING_WAITS:
            from ..intake.pairing import Pairing

            self.pairing = Pairing()
        earlier = self.pairing.failed(ev, source, raising_line(exc, getattr(self.shell, "user_ns", None)))
        with self._lock:
            self.window.appendleft(ev)
        if earlier is not None:
            self._replace([earlier])
        proj = self.project()
        if proj is not None:
            proj.stage_failure(ev, *([earlier] if earlier is not None else []))
        return ev

    def resolve_evidence(self, handles: list[str]) -> list[Evidence | str]:
        """Handles -> this session's Evidence where we hold it (the project may not
        have existed when it failed); ``last`` is the newest failure."""
        from ..errors import UnknownEvidence

        by_handle = {e.handle: e for e in self.window}
        out: list[Evidence | str] = []
        for h in handles:
            if h == "last":
                if not self.window:
                    raise UnknownEvidence("No failure staged in this session yet; nothing to cite as `last`.")
                out.append(self.window[0])
            else:
                out.append(by_handle.get(h, h))
        return out


_states: dict[int, KernelState] = {}


def state(shell: Any) -> KernelState:
    """This shell's jupymem state: its session id, window of staged failures, the
    ``pairing`` that finds their fixes (replaceable, e.g. with another threshold),
    ``quiet``, and ``wait_for_suggestions`` for lessons a model is still writing."""
    found = _states.get(id(shell))
    if found is None:
        found = _states[id(shell)] = KernelState(shell)
    return found


def forget(shell: Any) -> KernelState | None:
    """Drop this shell's state (on unload); returns it, so its hook can be unregistered."""
    return _states.pop(id(shell), None)


def session_evidence(shell: Any) -> list[Evidence]:
    """This kernel session's staged failures, newest first."""
    return list(state(shell).window)


session_state = state  # the name tests and benchmarks have used
