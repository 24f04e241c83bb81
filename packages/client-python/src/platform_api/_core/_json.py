"""JSON in and out: compact, UTF-8, with dates written the way the API writes them."""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any, Iterable, cast

from .._types import Omit

__all__ = ["dumps", "loads", "format_datetime"]


def format_datetime(value: _dt.datetime) -> str:
    """An aware datetime as the API writes instants: UTC, milliseconds, `Z`."""
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        # A naive datetime could be any zone; guessing would shift every filter by hours.
        raise ValueError(
            f"{value!r} has no time zone: pass an aware datetime, "
            "e.g. datetime(2025, 1, 1, tzinfo=timezone.utc)"
        )
    utc = value.astimezone(_dt.timezone.utc)
    return utc.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _default(value: Any) -> Any:
    if isinstance(value, _dt.datetime):
        return format_datetime(value)
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, Omit):
        raise TypeError("`omit` is only meaningful as a keyword argument's value")
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if isinstance(value, (set, frozenset, tuple)):
        return list(cast("Iterable[Any]", value))
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON; `datetime`s become RFC 3339 UTC strings."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_default).encode(
        "utf-8"
    )


def loads(data: bytes) -> Any:
    return json.loads(data.decode("utf-8"))
