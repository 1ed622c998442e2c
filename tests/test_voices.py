"""``retrieval.voices``: which hits take a head that one shared file holds whole."""

from __future__ import annotations

from collections.abc import Sequence

from jupymem.retrieval import voices

OWN = (-1, "author:Bob <bob@example.com>")


def origins_of(table: dict[str, tuple[int, str]]):
    def origins(window: Sequence[str]) -> list[tuple[int, str]]:
        return [table[c] for c in window]
    return origins


def ranked(*spec: tuple[str, tuple[int, str]]) -> tuple[list[str], dict[str, tuple[int, str]]]:
    return [name for name, _ in spec], dict(spec)


MALLORY = (2, "file:mallory-0123456789.jsonl")
ALICE = (1, "file:alice-1111111111.jsonl")
CAROL = (3, "file:carol-2222222222.jsonl")


def test_a_head_held_by_one_file_gives_its_last_places_to_the_other_sources() -> None:
    names, table = ranked(*((f"m{i}", MALLORY) for i in range(8)), ("c0", CAROL), ("a0", ALICE), ("m8", MALLORY))
    assert voices.share_head(names, 5, origins_of(table))
    # Two places (half the head, at most PLACES): Alice's file, seen first, then Carol's, in rank order.
    assert names[:5] == ["m0", "m1", "m2", "c0", "a0"]
    assert sorted(names) == sorted(table)  # nothing dropped
    assert names[5:] == ["m3", "m4", "m5", "m6", "m7", "m8"]


def test_one_place_in_a_small_head_goes_to_the_most_trusted_other_source() -> None:
    names, table = ranked(*((f"m{i}", MALLORY) for i in range(4)), ("c0", CAROL), ("a0", ALICE))
    assert voices.share_head(names, 3, origins_of(table))
    assert names[:3] == ["m0", "m1", "a0"]


def test_heads_left_as_ranked() -> None:
    cases = [
        ranked(*((f"m{i}", MALLORY) for i in range(8))),  # one source in the window
        ranked(*((f"o{i}", OWN) for i in range(6)), ("a0", ALICE)),  # this machine's own memories hold it
        ranked(*((f"o{i}", (-1, "file:bob-3333333333.jsonl")) for i in range(6)), ("a0", ALICE)),  # its own file
        ranked(("m0", MALLORY), ("a0", ALICE), *((f"m{i}", MALLORY) for i in range(1, 6))),  # two sources in it
        ranked(*((f"m{i}", MALLORY) for i in range(5))),  # nothing below the head
    ]
    for names, table in cases:
        before = list(names)
        assert not voices.share_head(names, 5, origins_of(table))
        assert names == before


def test_a_source_past_the_depth_stays_where_it_ranks() -> None:
    names, table = ranked(*((f"m{i}", MALLORY) for i in range(voices.DEPTH)), ("a0", ALICE))
    assert not voices.share_head(names, 5, origins_of(table))
    assert names[-1] == "a0"
