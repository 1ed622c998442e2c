"""The IPython face in a real InteractiveShell: magics, the hook, load/unload."""

from __future__ import annotations


from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import jupymem

from conftest import in_fresh_shell, loaded_shell


def run(ip: InteractiveShell, code: str):
    return ip.run_cell(code, store_history=True)


def test_remember_cell_magic_initializes_and_records(shell, repo):
    assert jupymem.project(repo) is None
    res = run(shell, "%%remember --kind decision --topic joins\nJoin sales to customers on customer_id.")
    assert res.success, res.error_in_exec
    proj = jupymem.project(repo)
    assert proj is not None
    (m,) = proj.list()
    assert (m.kind, m.topic, m.standing) == ("decision", "joins", "supported")
    assert m.provenance.recorder == "person"
    assert m.provenance.session  # the kernel session is recorded
    assert m.provenance.execution_count == res.execution_count


def test_failed_cell_is_staged_only_in_memory_until_memory_exists(shell, repo, jupymem_home):
    res = run(shell, "d = {}\nd['customer_id']")
    assert not res.success
    from jupymem.faces.kernel import session_evidence

    (ev,) = session_evidence(shell)
    assert ev.handle.startswith("ev-") and len(ev.handle) == 11
    assert ev.ename == "KeyError"
    assert ev.diagnosis == ("KeyError: 'customer_id'",)
    assert ev.execution_count == res.execution_count
    # Staging never initializes a repository, and writes nothing anywhere.
    assert jupymem.project(repo) is None
    assert not (jupymem_home / "registry.json").exists()
    # The lesson can still cite it; citing initializes.
    assert run(shell, "%%remember --kind failure --evidence last\nThe key is customer_id.").success
    (m,) = jupymem.project(repo).list()
    assert [e.handle for e in m.evidence] == [ev.handle]
    assert m.evidence[0].diagnosis == ("KeyError: 'customer_id'",)


def test_failures_are_staged_in_the_database_once_memory_exists(shell, repo):
    jupymem.init(repo)
    assert not run(shell, "1/0").success
    assert not run(shell, "def f(:\n  pass").success  # a syntax error fails before execution
    proj = jupymem.project(repo)
    staged = proj.staged_evidence()
    assert [e.ename for e in staged] == ["SyntaxError", "ZeroDivisionError"]
    assert staged[1].diagnosis == ("ZeroDivisionError: division by zero",)


def test_keyboard_interrupt_and_success_are_not_staged(shell, repo):
    jupymem.init(repo)
    assert run(shell, "x = 1").success
    run(shell, "raise KeyboardInterrupt")
    assert jupymem.project(repo).staged_evidence() == []


def test_window_keeps_64_newest(shell, repo):
    jupymem.init(repo)
    for i in range(70):
        run(shell, f"raise ValueError('failure {i}')")
    from jupymem.faces.kernel import session_evidence

    window = session_evidence(shell)
    assert len(window) == 64
    assert window[0].evalue == "failure 69"
    staged = jupymem.project(repo).staged_evidence(limit=1000)
    assert len(staged) == 64
    assert {e.evalue for e in staged} == {f"failure {i}" for i in range(6, 70)}


def test_memory_line_magic_operations(shell, repo, capsys):
    run(shell, "%memory init")
    run(shell, "%memory remember --kind constraint Never write to data/raw; it is read-only.")
    proj = jupymem.project(repo)
    (m,) = proj.list()
    assert m.kind == "constraint"
    capsys.readouterr()
    run(shell, "%memory block")
    out = capsys.readouterr().out
    assert out == proj.block().text + "\n"
    run(shell, "%memory search \"where can we write raw data?\"")
    shown = capsys.readouterr().out
    assert m.id in shown and ("strong" in shown or "likely" in shown)
    run(shell, f"%memory supersede {m.id} Never write to data/raw; write to data/interim instead.")
    new = proj.list()[0]
    assert new.supersedes == m.id
    run(shell, f"%memory retire {new.id} --reason moved to a lakehouse")
    assert proj.list() == []
    assert proj.get(new.id).retire_reason == "moved to a lakehouse"
    run(shell, f"%memory history {m.id}")
    assert "superseded" in capsys.readouterr().out
    run(shell, "%memory verify")
    assert "ok" in capsys.readouterr().out.lower()


def test_errors_become_usage_errors_and_record_nothing(shell, repo):
    res = run(shell, "%%remember\nour key is AKIAIOSFODNN7EXAMPLE for s3")
    assert isinstance(res.error_in_exec, UsageError)
    assert "AWS" in str(res.error_in_exec)
    assert jupymem.project(repo) is None or jupymem.project(repo).list() == []
    res = run(shell, "%memory show m-doesnotexist")
    assert isinstance(res.error_in_exec, UsageError)
    res = run(shell, "%memory frobnicate")
    assert isinstance(res.error_in_exec, UsageError)
    # The magics' own errors are never staged as evidence.
    from jupymem.faces.kernel import session_evidence

    assert session_evidence(shell) == []


def test_what_a_person_types_is_recorded_as_typed_never_with_the_notebooks_variables(shell, repo):
    """IPython fills `{expr}` and `$name` into a magic's line from the notebook's variables
    unless told not to: a password held in a variable would be recorded in clear, and a
    template's placeholders replaced by whatever the variables hold."""
    run(shell, "db_password = 'Tr0ub4dor&3xyz'\ncol = 'customer_id'\nsecret = 'x'")
    assert run(shell, "%memory remember Never hardcode {db_password}; read $secret from the vault.").success
    assert run(shell, "%%remember --kind 'decision' --topic \"$col\"\nName output columns {col}_clean.").success
    statements = {m.statement: m for m in jupymem.project(repo).list()}
    assert "Never hardcode {db_password}; read $secret from the vault." in statements
    written = statements["Name output columns {col}_clean."]
    assert (written.kind, written.topic) == ("decision", "$col")  # quotes taken off, nothing filled in
    assert not any("Tr0ub4dor" in s or "customer_id" in s for s in statements)
    # An unbalanced quote in the options is a usage error, and records nothing.
    res = run(shell, "%%remember --topic 'billing\nInvoices are in EUR.")
    assert isinstance(res.error_in_exec, UsageError) and "quotation" in str(res.error_in_exec)
    assert len(jupymem.project(repo).list()) == 2


def test_outside_git_is_refused_and_creates_nothing(tmp_path, monkeypatch, jupymem_home):
    outside = tmp_path / "plain"
    outside.mkdir()
    monkeypatch.chdir(outside)
    with loaded_shell() as ip:
        res = ip.run_cell("%%remember\nSomething worth keeping.")
        assert isinstance(res.error_in_exec, UsageError)
        assert "git" in str(res.error_in_exec)
        assert not any(jupymem_home.iterdir())


def test_notebook_path_from_session_name(shell, repo, monkeypatch):
    nb = repo / "analysis" / "01_load.ipynb"
    nb.parent.mkdir()
    nb.write_text("{}")
    monkeypatch.setenv("JPY_SESSION_NAME", str(nb))
    assert run(shell, "%%remember\nLoad with pyarrow, not fastparquet.").success
    (m,) = jupymem.project(repo).list()
    assert m.provenance.notebook == "analysis/01_load.ipynb"


def test_unload_removes_the_hook(repo, monkeypatch):
    monkeypatch.chdir(repo)
    ip = InteractiveShell.instance()
    try:
        before = len(ip.events.callbacks["post_run_cell"])
        ip.run_line_magic("load_ext", "jupymem")
        assert len(ip.events.callbacks["post_run_cell"]) == before + 1
        ip.run_line_magic("unload_ext", "jupymem")
        assert len(ip.events.callbacks["post_run_cell"]) == before
    finally:
        InteractiveShell.clear_instance()


def test_load_ext_imports_nothing_heavy(repo):
    out = in_fresh_shell(repo, (
        "ip.run_cell('1/0')\n"
        "heavy = [m for m in ('numpy', 'model2vec', 'sqlite_vec', 'litellm') if m in sys.modules]\n"
        "print(heavy)\n"
    ))
    assert out.strip().splitlines()[-1] == "[]"


def test_a_refused_first_record_initializes_nothing(shell, repo, jupymem_home):
    res = run(shell, "%%remember\nUsa siempre customer_id como clave para unir las tablas de ventas y clientes.")
    assert isinstance(res.error_in_exec, UsageError)
    assert "JUPYMEM_MODEL" in str(res.error_in_exec) and "JUPYMEM_LANGUAGE=source" in str(res.error_in_exec)
    res = run(shell, "%memory remember token = 'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB'")
    assert isinstance(res.error_in_exec, UsageError)
    assert jupymem.project(repo) is None
    assert not (jupymem_home / "registry.json").exists()
