"""Typed, validated reads of environment variables for every service's `Settings.from_env`."""

from __future__ import annotations

import os


def env_bool(name: str, default: bool) -> bool:
    """Read a boolean variable; anything but the usual spellings is an error."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ValueError(f"{name}={raw!r} is not a boolean (use true or false)")


def env_int(name: str, default: int, minimum: int, maximum: int) -> int:
    """Read a bounded integer variable."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not an integer") from None
    if not minimum <= value <= maximum:
        raise ValueError(f"{name}={value} is outside {minimum}..{maximum}")
    return value


def env_address(name: str, default: str, *, empty_is_off: bool = False) -> str:
    """Read a host:port variable; an empty one is refused unless `empty_is_off` (the address
    of something that may be switched off)."""
    value = os.environ.get(name, default)
    if value == "" and empty_is_off:
        return value
    if not value.rpartition(":")[2].isdigit():
        raise ValueError(f"{name}={value!r}: use host:port")
    return value
