"""The base of the generated models, and the lenient parsing helpers they use.

Models are plain frozen classes with typed attributes, not dict subclasses (a dict base makes
`obj.items` the dict method; stripe-python left it in v15) and not pydantic (a dependency).
Parsing never validates: a field the server added later is kept (see `to_dict()` and
`model_extra`), an enum value this SDK does not know yet arrives as the string, and a value of
an unexpected shape is kept as it came rather than raising.
"""

from __future__ import annotations

import copy
import datetime as _dt
import re
from typing import Any, Callable, ClassVar, Dict, List, Mapping, Optional, Tuple, TypeVar

from ._core._json import format_datetime

__all__ = [
    "BaseModel",
    "FrozenInstanceError",
    "as_dict",
    "json_get",
    "parse_datetime",
    "parse_date",
    "parse_model",
    "parse_list",
    "parse_map",
]

_M = TypeVar("_M", bound="BaseModel")


class FrozenInstanceError(AttributeError):
    """Models are immutable: they describe what the API returned."""


class BaseModel:
    """A resource, event or nested object as the API returned it."""

    #: (attribute name, JSON name) of every field the SDK knows.
    _FIELDS: ClassVar[Tuple[Tuple[str, str], ...]] = ()
    _data: Optional[Dict[str, Any]]

    def _init(self, values: Mapping[str, Any]) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_data", None)

    def _attach(self, raw: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_data", dict(raw))

    def to_dict(self) -> Dict[str, Any]:
        """The object as JSON: for a model from the API, exactly what it sent, unknown keys
        included; for one built in code, its fields."""
        if self._data is not None:
            return copy.deepcopy(self._data)
        return {json_name: to_json(getattr(self, name)) for name, json_name in self._FIELDS}

    @property
    def model_extra(self) -> Dict[str, Any]:
        """Keys the API sent that this SDK version does not know (a newer server's fields)."""
        if self._data is None:
            return {}
        known = {json_name for _, json_name in self._FIELDS}
        return {key: copy.deepcopy(value) for key, value in self._data.items() if key not in known}

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"{type(self).__name__} is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, BaseModel)
        return self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name, _ in self._FIELDS)
        return f"{type(self).__name__}({fields})"

    def __copy__(self: _M) -> _M:
        return self

    def __deepcopy__(self: _M, memo: Dict[int, Any]) -> _M:
        return self


def to_json(value: Any) -> Any:
    """A field value back to JSON (for models built in code)."""
    if isinstance(value, BaseModel):
        return value.to_dict()
    if isinstance(value, _dt.datetime):
        return format_datetime(value) if value.tzinfo is not None else value.isoformat()
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return value


# --- lenient parsing helpers (used by generated `from_json`) ---------------------------------


def json_get(raw: Mapping[str, Any], key: str) -> Any:
    """The value under `key`, None when absent; typed `Any` because nothing is validated."""
    return raw.get(key)


def as_dict(data: Any) -> Dict[str, Any]:
    """The JSON object, or an empty one when the value is not an object."""
    if isinstance(data, dict):
        return data  # pyright: ignore[reportUnknownVariableType]
    return {}


# RFC 3339 as the API writes it; fromisoformat before 3.11 rejects `Z` and odd fraction lengths.
_DATETIME = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?(Z|z|[+-]\d{2}:?\d{2})?$"
)


def parse_datetime(value: Any) -> Any:
    """An RFC 3339 string as an aware `datetime`; anything else is returned unchanged."""
    if not isinstance(value, str):
        return value
    match = _DATETIME.match(value)
    if match is None:
        return value
    day, clock, fraction, offset = match.groups()
    text = f"{day}T{clock}"
    if fraction:
        text += "." + (fraction + "000000")[:6]
    if offset in (None, "Z", "z"):
        text += "+00:00"
    else:
        text += offset if ":" in offset else f"{offset[:3]}:{offset[3:]}"
    try:
        return _dt.datetime.fromisoformat(text)
    except ValueError:
        return value


def parse_date(value: Any) -> Any:
    """A `YYYY-MM-DD` string as a `date`; anything else is returned unchanged."""
    if not isinstance(value, str):
        return value
    try:
        return _dt.date.fromisoformat(value)
    except ValueError:
        return value


def parse_model(parse: Callable[[Any], Any], value: Any) -> Any:
    """A nested object through its model's `from_json`; a non-object is kept as it is."""
    return parse(value) if isinstance(value, dict) else value


def parse_list(parse: Callable[[Any], Any], value: Any) -> Any:
    if not isinstance(value, list):
        return value
    items: List[Any] = [parse(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
    return items


def parse_map(parse: Callable[[Any], Any], value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    return {key: parse(item) for key, item in value.items()}  # pyright: ignore[reportUnknownVariableType]


def identity(value: Any) -> Any:
    return value
