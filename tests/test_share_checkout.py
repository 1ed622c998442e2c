"""The shared log survives what git's checkout and the file system do to it.

A committed ``.gitattributes`` can make git convert ``.jupymem/log`` files in every clone
made after it (line ends, an encoding, ``$Id$``); an editor adds a byte order mark; a
restore tool rewrites a file and puts its mtime back; a file grows to gigabytes; a
time is written in another script's digits. Each case here is made for real (real
files, real git) and read through the real cache (``Project``), and what must hold is the
same: the writer's memories are applied as written, nothing is accepted that its writer
did not write, and what git is told to do is named by ``verify``.
"""

from __future__ import annotations

import codecs
import json
import os
import uuid
from pathlib import Path

import pytest

import jupymem
from jupymem.errors import InvalidStatement
from jupymem.intake import clock
from jupymem.sharing import checkout, sharelog

from team import git
import test_share_log
from test_share_log import PAST, Writer, memory_payload, reread

shared = test_share_log.shared  # the fixture: a repository that shares one memory of Ana's

BEN = ("Amounts are in cents", "Dates are UTC", "The $Id$ keyword marks generated files")


def ben_writes(repo: Path) -> Writer:
    ben = Writer(repo)
    for statement in BEN:
        ben.append("record", {"memory": memory_payload(statement)}, PAST)
    return ben


def statements(proj) -> set[str]:
    return {m.statement for m in proj.list()}


def _utf16(data: bytes, codec: str, bom: bytes = b"") -> bytes:
    return bom + data.decode("utf-8").encode(codec)


# What a checkout (or an editor) makes of a file's bytes.
CONVERSIONS = {
    "bom": lambda b: codecs.BOM_UTF8 + b,
    "crlf": lambda b: b.replace(b"\n", b"\r\n"),
    "bom_and_crlf": lambda b: codecs.BOM_UTF8 + b.replace(b"\n", b"\r\n"),
    "utf16le": lambda b: _utf16(b, "utf-16-le"),
    "utf16le_bom": lambda b: _utf16(b, "utf-16-le", codecs.BOM_UTF16_LE),
    "utf16be": lambda b: _utf16(b, "utf-16-be"),
    "utf16be_crlf_bom": lambda b: _utf16(b.replace(b"\n", b"\r\n"), "utf-16-be", codecs.BOM_UTF16_BE),
    "ident": lambda b: b.replace(b"$Id$", b"$Id: " + b"a" * 40 + b" $"),
}


@pytest.mark.parametrize("conversion", sorted(CONVERSIONS))
def test_a_file_converted_at_checkout_is_read_as_its_writer_wrote_it(shared, repo: Path, conversion: str) -> None:
    ben = ben_writes(repo)
    raw = ben.path.read_bytes()
    converted = CONVERSIONS[conversion](raw)
    assert converted != raw
    ben.path.write_bytes(converted)
    proj = reread(repo)
    assert set(BEN) <= statements(proj), statements(proj)
    report = proj.verify()
    assert report.ok, report.problems
    # Its writer's next line, appended as jupymem writes (UTF-8, LF), is applied too.
    if not conversion.startswith("utf16"):
        ben.append("record", {"memory": memory_payload("Refunds are negative")}, clock.now_at())
        assert "Refunds are negative" in statements(reread(repo))


def test_a_converted_line_still_has_to_match_its_hash(shared, repo: Path) -> None:
    """Undoing a conversion never makes an altered line acceptable."""
    ben = ben_writes(repo)
    raw = ben.path.read_bytes().replace(b"Dates are UTC", b"Dates are CET")
    ben.path.write_bytes(codecs.BOM_UTF8 + raw.replace(b"\n", b"\r\n"))
    proj = reread(repo)
    assert "Dates are CET" not in statements(proj) and "Amounts are in cents" in statements(proj)
    problems = "\n".join(proj.verify().problems)
    assert f"{ben.path.name} line 2: fails its hash" in problems, problems


def test_our_own_file_after_a_crlf_checkout_takes_our_next_line(shared, repo: Path) -> None:
    (mine,) = sharelog.log_dir(repo).glob("*.jsonl")
    mine.write_bytes(codecs.BOM_UTF8 + mine.read_bytes().replace(b"\n", b"\r\n"))
    proj = reread(repo)
    proj.remember("Plots use the colorblind palette")
    assert [p.name for p in sharelog.log_dir(repo).glob("*.jsonl")] == [mine.name]  # no new file was needed
    assert proj.verify().ok, proj.verify().problems


def test_a_huge_sparse_file_is_read_only_up_to_the_byte_cap(shared, repo: Path) -> None:
    ben = Writer(repo)
    ben.append("record", {"memory": memory_payload("Amounts are in cents")}, PAST)
    with ben.path.open("r+b") as fh:
        fh.truncate(4 << 30)  # 4 GiB of holes after one good line: no disk, all reading
    reading = sharelog.read_file(ben.path)
    assert [e.payload["memory"]["statement"] for e in reading.entries] == ["Amounts are in cents"]
    assert any("larger than the 64 MB" in p.message for p in reading.problems), reading.problems
    proj = reread(repo)
    assert "Amounts are in cents" in statements(proj)
    assert any("larger than the 64 MB" in p for p in proj.verify().problems)


def test_a_writer_starts_a_new_file_before_the_byte_cap(shared, repo: Path) -> None:
    (mine,) = sharelog.log_dir(repo).glob("*.jsonl")
    with mine.open("ab") as fh:  # our file, grown past half the cap by long blank lines (which readers skip)
        line = b" " * (sharelog.MAX_LINE_BYTES - 1) + b"\n"
        fh.write(line * (checkout.MAX_FILE_BYTES // 2 // len(line) + 1))
    proj = reread(repo)
    proj.remember("Plots use the colorblind palette")
    assert len(list(sharelog.log_dir(repo).glob("*.jsonl"))) == 2
    assert proj.verify().ok, proj.verify().problems


FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


@pytest.mark.parametrize("digits", [FULL_WIDTH, ARABIC_INDIC], ids=["full_width", "arabic_indic"])
def test_a_time_in_other_digits_is_refused_at_once_not_left_waiting(shared, repo: Path, digits) -> None:
    at = PAST.translate(digits)
    assert clock.parse_at(at) is None
    with pytest.raises(InvalidStatement, match="not a UTC timestamp"):
        sharelog.check_line({"uid": uuid.uuid4().hex, "type": "record", "at": at, "writer": {"id": "0123456789"},
                             "payload": {"memory": memory_payload("Amounts are in cents")}})
    ben = Writer(repo)
    ben.append("record", {"memory": memory_payload("Amounts are in cents")}, at)
    proj = reread(repo)
    problems = "\n".join(proj.verify().problems)
    assert f"{ben.path.name} line 1: is refused" in problems and "not a UTC timestamp" in problems, problems
    assert "ahead of this machine's clock" not in problems and "wait" not in problems
    assert proj.sharing_status().files and all(f.waiting_until is None for f in proj.sharing_status().files)


@pytest.mark.parametrize("same_uid", [False, True], ids=["new_uid", "same_uid"])
def test_a_rewrite_of_the_same_size_with_its_mtime_put_back_is_noticed(shared, repo: Path, tmp_path,
                                                                      same_uid: bool) -> None:
    ben = Writer(repo)
    uid = uuid.uuid4().hex
    ben.append("record", {"memory": memory_payload("Revenue is reported in EUR")}, PAST, uid)
    assert "Revenue is reported in EUR" in statements(reread(repo))
    before = ben.path.stat()
    rewritten = Writer(repo)
    line = rewritten.line("record", {"memory": memory_payload("Revenue is reported in USD")}, PAST,
                          uid if same_uid else uuid.uuid4().hex)
    ben.path.write_text(line, encoding="utf-8")
    os.utime(ben.path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = ben.path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    proj = reread(repo)
    assert "Revenue is reported in USD" in statements(proj) and "Revenue is reported in EUR" not in statements(proj)
    from test_share_log import fresh_state, view

    assert view(proj) == fresh_state(repo, tmp_path)  # the cache holds what a fresh replay holds


# -- attributes ------------------------------------------------------------------------------


def test_share_writes_attributes_that_keep_git_from_converting_its_files(shared, repo: Path, tmp_path) -> None:
    folder = repo / ".jupymem"
    assert (folder / ".gitattributes").read_text() == checkout.ATTRIBUTES
    # A root .gitattributes that would convert the log: ours, deeper, decides.
    (repo / ".gitattributes").write_text(".jupymem/log/*.jsonl text eol=crlf working-tree-encoding=UTF-16LE\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "share, and attributes")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    (log,) = sharelog.log_dir(clone).glob("*.jsonl")
    assert log.read_bytes() == next(sharelog.log_dir(repo).glob("*.jsonl")).read_bytes()
    proj = jupymem.project(clone)
    assert statements(proj) == {"Join sales to customers on customer_id"}
    assert proj.verify().ok, proj.verify().problems


def test_share_brings_the_attributes_an_earlier_share_wrote_up_to_date(shared, repo: Path) -> None:
    attributes = repo / ".jupymem" / ".gitattributes"
    attributes.write_text("*.jsonl merge=union\n")
    said = shared.share().message
    assert attributes.read_text() == checkout.ATTRIBUTES and ".gitattributes (updated)" in said
    attributes.write_text("*.jsonl merge=union\n*.md -diff\n")  # someone's own: left as it is
    shared.share()
    assert attributes.read_text() == "*.jsonl merge=union\n*.md -diff\n"


@pytest.mark.parametrize(("rule", "said"), [
    ("*.jsonl text eol=crlf", "`eol=crlf`"),
    ("*.jsonl -diff", "hides the file's changes from review"),
    ("*.jsonl binary", "hides the file's changes from review"),
    ("*.jsonl filter=lfs", "`filter=lfs`"),
    ("*.jsonl ident", "`ident`"),
])
def test_verify_names_an_attribute_that_converts_the_log_or_hides_it(shared, repo: Path, rule: str, said: str) -> None:
    (repo / ".jupymem" / "log" / ".gitattributes").write_text(rule + "\n")
    report = reread(repo).verify()
    assert not report.ok
    named = [p for p in report.problems if said in p]
    assert named and ".jupymem/log/" in named[0] and "Remove the attribute" in named[0], report.problems


def test_under_an_attribute_that_rewrites_commits_new_memories_stay_on_this_machine(shared, repo: Path) -> None:
    (mine,) = sharelog.log_dir(repo).glob("*.jsonl")
    before = mine.read_bytes()
    rule = sharelog.log_dir(repo) / ".gitattributes"
    rule.write_text("*.jsonl working-tree-encoding=UTF-16LE\n")
    proj = reread(repo)
    kept = proj.remember("Plots use the colorblind palette")
    assert mine.read_bytes() == before and len(list(sharelog.log_dir(repo).glob("*.jsonl"))) == 1
    assert kept.statement in statements(proj)
    status = proj.sharing_status()
    assert status.local_events == 1
    assert any("stay on this machine" in p and "working-tree-encoding=UTF-16LE" in p for p in status.problems)
    rule.unlink()
    said = proj.share().message
    assert "Wrote 1 events" in said, said
    assert kept.statement in mine.read_text(encoding="utf-8")
    status = reread(repo).sharing_status()
    assert status.local_events == 0 and not status.problems
    assert reread(repo).verify().ok


def test_the_lines_read_back_are_the_canonical_bytes(shared, repo: Path) -> None:
    ben = ben_writes(repo)
    raw = ben.path.read_bytes()
    ben.path.write_bytes(_utf16(raw.replace(b"\n", b"\r\n"), "utf-16-le", codecs.BOM_UTF16_LE))
    reading = sharelog.read_file(ben.path)
    assert not reading.problems
    assert [json.loads(line)["hash"] for line in raw.decode().splitlines()] == [e.hash for e in reading.entries]
    # The payload as the database stores it is the line's own canonical slice, as for any file.
    assert [e.body for e in reading.entries] == [
        json.dumps(json.loads(line)["payload"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        for line in raw.decode().splitlines()]
