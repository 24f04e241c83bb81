"""Response headers: a case-insensitive mapping (its own module, so errors can hold it)."""

from __future__ import annotations

from typing import Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union, cast

__all__ = ["Headers", "HeadersInput"]

HeadersInput = Union[Mapping[str, str], Iterable[Tuple[str, str]]]


class Headers(Mapping[str, str]):
    """Response headers: case-insensitive, repeated headers joined with ", " (RFC 9110 §5.3)."""

    def __init__(self, items: Optional[HeadersInput] = None) -> None:
        self._items: List[Tuple[str, str]] = []
        if items is None:
            return
        if isinstance(items, Mapping):
            pairs = list(cast("Mapping[str, str]", items).items())
        else:
            pairs = list(items)
        for name, value in pairs:
            self._items.append((str(name), str(value)))

    def __getitem__(self, name: str) -> str:
        values = self.get_list(name)
        if not values:
            raise KeyError(name)
        return ", ".join(values)

    def get_list(self, name: str) -> List[str]:
        """Every value of a header, in the order received."""
        lower = name.lower()
        return [value for key, value in self._items if key.lower() == lower]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(self.get_list(name))

    def __iter__(self) -> Iterator[str]:
        seen: Dict[str, None] = {}
        for key, _ in self._items:
            seen.setdefault(key.lower(), None)
        return iter(seen)

    def __len__(self) -> int:
        return len({key.lower() for key, _ in self._items})

    def raw_items(self) -> List[Tuple[str, str]]:
        """The headers as received: names in their case, repeats kept."""
        return list(self._items)

    def __repr__(self) -> str:
        return f"Headers({dict(self.items())!r})"
