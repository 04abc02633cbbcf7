"""RFC 3339 / ISO 8601 time handling shared by all services.

Inputs must carry a zone: a naive time would be read in whatever zone the server happens to
run in, so it is refused rather than guessed. Outputs are always UTC with a trailing "Z".
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime


class NaiveTimeError(ValueError):
    """The time has no zone offset."""


def parse_aware(text: str) -> datetime:
    """Parse an ISO 8601 time with a zone and normalize it to UTC.

    Raises ValueError for malformed text and NaiveTimeError for a time without a zone.
    """
    value = datetime.fromisoformat(text.strip())
    if value.tzinfo is None or value.utcoffset() is None:
        raise NaiveTimeError(f"{text!r} has no time zone; add 'Z' or an offset such as +08:00")
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"{text!r} is outside the representable range in UTC") from None


# A read formats the same few times many times over (each result's review and record times on
# every copy it recorded); equal datetimes are the same instant, so they format alike.
@functools.lru_cache(maxsize=4096)
def format_utc(value: datetime | None) -> str:
    """RFC 3339 in UTC with microseconds only when present; "" for None."""
    if value is None:
        return ""
    utc = value.astimezone(UTC)
    text = utc.isoformat(timespec="microseconds" if utc.microsecond else "seconds")
    return text.replace("+00:00", "Z")
