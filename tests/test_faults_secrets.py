"""Fault injection with secrets: every shape the scanner knows, sent through the real
CLI, a real Jupyter server and a real IPython shell, in every free-text field, and in
failed cells (multi-line private keys included). Afterwards no secret may be found in
any file under JUPYMEM_HOME: the databases, their WAL and shared memory, the registry.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

import jupymem
from conftest import shell_in
from faults import assert_nowhere, jm, ok, quiesce, refused
from secret_shapes import PROSE, SHAPES

pytest_plugins = ["pytest_jupyter.jupyter_server"]

# The shapes the adversarial pass found stored byte for byte.
FOUND = [
    "gitlab-pat", "slack-webhook", "twilio-api-key", "sendgrid", "npm", "pypi", "databricks",
    "google-oauth-secret", "shopify", "digitalocean-pat", "telegram", "slack-app",
]
AWS_PROSE = next(text for kind, text, _ in PROSE if kind == "aws-secret-key")
ALL_SECRETS = [secret for _, _, secret in SHAPES.values()] + [secret for _, _, secret in PROSE]


def _pem_lines() -> list[str]:
    """The body lines of every private key shape: none of them may be stored."""
    return [line for name in ("rsa-pem", "openssh", "ec-pem") for line in SHAPES[name][1].splitlines()[1:-1]]


@pytest.mark.parametrize("name", FOUND)
def test_the_cli_refuses_each_found_shape_and_stores_nothing(name, repo, jupymem_home):
    ok(jm("remember", "Timestamps are UTC.", cwd=repo))
    _, token, secret = SHAPES[name]
    err = refused(jm("remember", f"The deploy job uses {token} for now", cwd=repo), 2)
    assert "Secrets are never stored" in err and secret not in err
    quiesce()
    assert_nowhere(jupymem_home, [secret])


def test_the_cli_refuses_secrets_in_prose_and_in_the_topic(repo, jupymem_home):
    ok(jm("remember", "Timestamps are UTC.", cwd=repo))
    refused(jm("remember", AWS_PROSE, cwd=repo), 2)
    refused(jm("remember", "Deploy from the ops account.", "--topic", SHAPES["npm"][1], cwd=repo), 2)
    refused(jm("remember", "-", cwd=repo, input=f"our key\n{SHAPES['openssh'][1]}\n".encode()), 2)
    assert len(ok(jm("list", "--json", cwd=repo))) == 1
    quiesce()
    assert_nowhere(jupymem_home, [SHAPES["npm"][2], *[s for k, _, s in PROSE if k == "aws-secret-key"], *_pem_lines()])


def test_the_cli_refuses_a_secret_written_encoded_in_every_field(repo, jupymem_home):
    """A link copied with its token percent-encoded, JSON's escaped slashes, full-width
    letters: found on 6 December by an insider round, each was stored."""
    ok(jm("remember", "Timestamps are UTC.", cwd=repo))
    token = SHAPES["github-pat"][1]
    wide = "".join(chr(ord(c) + 0xFEE0) for c in token)
    for text in (f"The hook is https://ci.example.com/cb%3Ftoken%3D{token}%26a%3D1 now",
                 "Connect to postgres:\\/\\/admin:Pa55word99@db.internal:5432\\/sales",
                 f"The bot uses {wide} for now"):
        err = refused(jm("remember", text, cwd=repo), 2)
        assert "Secrets are never stored" in err and token not in err and "Pa55word99" not in err
        refused(jm("remember", "Deploy from the ops account.", "--topic", max(text.split(), key=len), cwd=repo), 2)
    assert len(ok(jm("list", "--json", cwd=repo))) == 1
    quiesce()
    assert_nowhere(jupymem_home, [token, "Pa55word99", wide])


# -- REST ---------------------------------------------------------------------------------


async def _post(jp_fetch: Any, route: str, body: dict[str, Any]) -> tuple[int, Any]:
    resp = await jp_fetch("jupymem", "api", *route.split("/"), method="POST", body=json.dumps(body),
                          raise_error=False)
    return resp.code, json.loads(resp.body)


async def test_rest_refuses_every_shape_in_every_free_text_field(jp_fetch, jp_root_dir, jupymem_home):
    from conftest import make_repo

    repo = make_repo(Path(jp_root_dir) / "proj")
    code, first = await _post(jp_fetch, "memories", {"path": "proj", "statement": "Timestamps are UTC."})
    assert code == 201
    fields = ("statement", "topic", "quote", "cell_id")
    for name, (_kind, token, secret) in SHAPES.items():
        for field in fields:
            body = {"path": "proj", "statement": "Join on customer_id.", field: token if field != "statement" else
                    f"Join with {token} once."}
            if field == "quote":
                body["recorder"] = "assistant"
            code, data = await _post(jp_fetch, "memories", body)
            assert (code, data["error"]) == (400, "secret_refused"), (name, field, data)
            assert secret not in data["message"]
        code, data = await _post(jp_fetch, f"memories/{first['id']}/retire", {"path": "proj", "reason": token})
        assert (code, data["error"]) == (400, "secret_refused"), (name, data)
    for kind, text, _secret in PROSE:
        code, data = await _post(jp_fetch, "memories", {"path": "proj", "statement": text})
        assert code == 400, (kind, data)
    assert len(jupymem.project(repo).list()) == 1
    quiesce()
    assert_nowhere(jupymem_home, ALL_SECRETS)


# -- IPython: failed cells ------------------------------------------------------------------


@pytest.fixture
def shell(repo: Path, monkeypatch: pytest.MonkeyPatch):
    jupymem.init(repo).remember("Timestamps are UTC.")
    yield from shell_in(repo, monkeypatch)


def test_failed_cells_keep_no_secret_and_keys_are_redacted_as_a_block(shell, repo, jupymem_home):
    # Secrets in exception messages, notes and the cell source; keys over many lines.
    for name, (_, token, _) in SHAPES.items():
        cell = f"token = {token!r}\nraise ValueError('bad credentials: ' + token)"
        assert not shell.run_cell(cell).success, name
    key = SHAPES["openssh"][1]
    cell = f"key = '''{key}'''\nraise ValueError('cannot parse\\n' + key + '\\nin deploy.cfg')"
    assert not shell.run_cell(cell).success
    cell = "e = KeyError('x')\ne.add_note('''" + SHAPES["rsa-pem"][1] + "''')\nraise e"
    assert not shell.run_cell(cell).success
    staged = jupymem.project(repo).staged_evidence()
    assert len(staged) == 64  # the window: the oldest were dropped (their bytes are checked below too)
    newest = staged[1]  # the multi-line key in the message
    assert newest.diagnosis == ("ValueError: cannot parse", "[REDACTED:private-key]", "in deploy.cfg")
    assert "[REDACTED:private-key]" in staged[0].diagnosis[-1]  # the key in a note
    # Citing one keeps it as a lesson: the cited copy is as clean as the staged one.
    assert shell.run_cell(f"%%remember --kind failure --evidence {newest.handle}\nParse keys from the vault.").success
    quiesce()
    assert_nowhere(jupymem_home, [*ALL_SECRETS, *_pem_lines()])


def test_a_secret_in_a_topic_is_refused_in_ipython(shell, repo, jupymem_home):
    token = SHAPES["databricks"][1]
    with pytest.raises(UsageError, match="The topic contains a Databricks token"):
        shell.run_cell_magic("remember", f"--topic {token}", "Use the shared cluster.")
    quiesce()
    assert_nowhere(jupymem_home, [token])
