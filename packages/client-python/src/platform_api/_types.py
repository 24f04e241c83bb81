"""Small types shared by the client and the generated resources."""

from __future__ import annotations

from typing import Any, Dict, Final, Literal, Mapping, Optional, TypedDict, TypeVar, Union

__all__ = ["Omit", "omit", "RequestOptions", "Body", "Query", "strip_omitted"]

_T = TypeVar("_T")


class Omit:
    """The type of `omit`: "this keyword argument was not given".

    A separate value from `None`, so `update(phone=None)` sends `{"phone": null}` (clear the
    field) while leaving `phone` out sends nothing about it (leave the field alone).
    """

    _instance: Optional[Omit] = None

    def __new__(cls) -> Omit:
        # One instance, so `x is omit` works as well as `isinstance(x, Omit)`.
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return "omit"

    def __copy__(self) -> Omit:
        return self

    def __deepcopy__(self, memo: Dict[int, Any]) -> Omit:
        return self


omit: Final = Omit()

Query = Mapping[str, object]
"""Query parameters before encoding: values may be strings, numbers, booleans, dates, lists,
nested mappings (`{"created_at": {"gte": ...}}`), `None` or `omit` (both left out)."""

Body = Mapping[str, object]
"""A JSON object body before encoding; `omit` values are left out, `None` is sent as null. An
upload's body is an `Upload` (`_core/_upload.py`) instead, sent as multipart/form-data."""


class RequestOptions(TypedDict, total=False):
    """Per-call options, kept in one dict so they never collide with an API parameter."""

    extra_headers: Mapping[str, str]
    """Headers added to (or replacing) the SDK's own for this call."""
    extra_query: Mapping[str, object]
    """Query parameters the SDK does not know yet (sent as given)."""
    extra_body: Mapping[str, object]
    """Body fields the SDK does not know yet, merged into the JSON body."""
    idempotency_key: str
    """The `Idempotency-Key` for a POST instead of a generated one (e.g. your own record id)."""
    timeout: float
    """Seconds for each attempt of this call (connection, headers and body)."""
    max_retries: int
    """Retries after the first attempt for this call; 0 disables retrying."""


def strip_omitted(values: Mapping[str, Union[_T, Omit]]) -> Dict[str, _T]:
    """The entries that were given: `omit` values are dropped, `None` values kept."""
    return {key: value for key, value in values.items() if not isinstance(value, Omit)}
