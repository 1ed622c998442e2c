"""Event times: one format, and how far a clock may be trusted.

Every event carries its time as ``2025-01-02T03:04:05.000006Z`` (UTC, microseconds:
sortable as text, distinct within a burst). A shared repository replays its writers'
events in (time, uid) order, so a time is also a claim about order, written by
whoever wrote the line. Two bounds keep that claim from being a weapon:

* ``EARLIEST``: no jupymem event can predate jupymem's format. Lines dated 1970 would
  otherwise sort first and take the block's places before a team's real memories.
* ``MAX_SKEW``: a line dated further ahead of this machine's clock waits until then
  (``sharelog``) or is refused (an import). Nothing ahead of it ever moves the time
  this machine gives its own events (``eventlog.next_at``), so a line "from the year
  9000" cannot push every teammate's later events after it, nor overflow a datetime.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

__all__ = [
    "AT_FORMAT", "EARLIEST", "MAX_SKEW", "ahead", "after", "format_at", "now", "now_at", "now_stamp", "parse_at",
    "skew_text",
]

AT_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
STAMP_FORMAT = "%Y%m%dT%H%M%S%fZ"  # the same, without the separators a file name would rather not hold
EARLIEST = "2025-01-01T00:00:00.000000Z"
MAX_SKEW = timedelta(minutes=10)


def now() -> datetime:
    return datetime.now(timezone.utc)


def format_at(moment: datetime) -> str:
    return moment.strftime(AT_FORMAT)


def now_at() -> str:
    """Now, as an event time."""
    return format_at(now())


def now_stamp() -> str:
    """Now, for a file name (``name.damaged-20250102T030405000006Z``)."""
    return now().strftime(STAMP_FORMAT)


def after(last: datetime | None, moment: datetime) -> datetime:
    """``moment``, or a microsecond after ``last`` when ``moment`` is not later: the
    time of an event that must sort after the one before it (a burst, a faster clock)."""
    if last is not None and last >= moment:
        return last + timedelta(microseconds=1)
    return moment


def parse_at(at: str) -> datetime | None:
    """An event time as an aware datetime; None when it is not one (ASCII digits only:
    strptime reads any script's digits, which sort after every real time as text)."""
    if not isinstance(at, str) or not at.isascii():
        return None
    try:
        return datetime.strptime(at, AT_FORMAT).replace(tzinfo=timezone.utc)
    except (TypeError, ValueError):
        return None


def ahead(at: str, moment: datetime) -> bool:
    """Whether ``at`` lies more than ``MAX_SKEW`` after ``moment`` (compared as text:
    the format sorts as time does, and text never overflows)."""
    return at > format_at(moment + MAX_SKEW)


def skew_text() -> str:
    return f"{int(MAX_SKEW.total_seconds() // 60)} minutes"
