"""Runs last: fails when the contract has an operation that no live test called successfully."""

from __future__ import annotations

from platform_api import OPERATIONS

from .conftest import CALLED


def test_every_operation_of_the_contract_was_called() -> None:
    never = sorted(op.id for op in OPERATIONS if op.id not in CALLED)
    assert never == [], f"operations no live test called (add a test): {never}"
