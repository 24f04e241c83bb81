"""Query strings in the API's conventions.

- a list is one comma-separated value (`status=active,inactive`: equality, or IN);
- a mapping nests with brackets (`created_at={"gte": d}` → `created_at[gte]=...`), the form of
  `openai-python`'s `_qs.py` with `nested_format="brackets"` and of `stripe/_encode.py`;
- `None` and `omit` are left out (a query cannot say null); booleans are `true`/`false`;
- aware datetimes are RFC 3339 UTC (`2025-01-01T00:00:00.000Z`), dates `YYYY-MM-DD`.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, List, Mapping, Tuple
from urllib.parse import quote

from .._types import Omit
from ._json import format_datetime

__all__ = ["encode_query", "flatten_query"]


def flatten_query(params: Mapping[str, object]) -> List[Tuple[str, str]]:
    """The `(name, value)` pairs a query holds, in order, before percent-encoding."""
    pairs: List[Tuple[str, str]] = []
    for name, value in params.items():
        _flatten(name, value, pairs)
    return pairs


def encode_query(params: Mapping[str, object]) -> str:
    """`name=value&...`, percent-encoded (brackets included, as `URLSearchParams` does)."""
    return "&".join(
        f"{quote(name, safe='')}={quote(value, safe='')}" for name, value in flatten_query(params)
    )


def _flatten(name: str, value: Any, pairs: List[Tuple[str, str]]) -> None:
    if value is None or isinstance(value, Omit):
        return
    if isinstance(value, Mapping):
        for key, inner in value.items():  # pyright: ignore[reportUnknownVariableType]
            _flatten(f"{name}[{key}]", inner, pairs)
        return
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_scalar(name, item) for item in value]  # pyright: ignore[reportUnknownVariableType]
        if items:
            pairs.append((name, ",".join(items)))
        return
    pairs.append((name, _scalar(name, value)))


def _scalar(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _dt.datetime):
        return format_datetime(value)
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, (str, int, float)):
        return str(value)
    raise TypeError(f"query parameter {name!r}: cannot send a {type(value).__name__} in a query")
