"""The generated layer matches the operation list, and every raw twin matches its method."""

from __future__ import annotations

import inspect
import typing

import platform_api
from platform_api import OPERATIONS, types
from platform_api._core._resource import SyncAPIResource


def test_every_operation_is_a_method_and_its_raw_twin_has_the_same_parameters() -> None:
    client = platform_api.PlatformClient(token="pat_x", base_url="http://127.0.0.1:1")
    assert len(OPERATIONS) > 0
    assert len({op.id for op in OPERATIONS}) == len(OPERATIONS)
    for op in OPERATIONS:
        namespace = getattr(client, op.resource)
        assert isinstance(namespace, SyncAPIResource), op.id
        method = getattr(namespace, op.method)
        twin = getattr(getattr(namespace, "with_raw_response"), op.method)
        plain = inspect.signature(method)
        raw = inspect.signature(twin)
        assert list(plain.parameters.values()) == list(raw.parameters.values()), op.id
        assert raw.return_annotation == f"APIResponse[{plain.return_annotation}]", op.id
        assert "request_options" in plain.parameters, op.id
        doc = method.__doc__ or ""
        assert f"`{op.http_method} {op.path}`" in doc, op.id


def test_path_arguments_are_positional_and_the_rest_keyword_only() -> None:
    client = platform_api.PlatformClient(token="pat_x", base_url="http://127.0.0.1:1")
    for op in OPERATIONS:
        parameters = list(inspect.signature(getattr(getattr(client, op.resource), op.method)).parameters.values())
        path_params = op.path.count("{")
        kinds = [p.kind for p in parameters]
        assert kinds[:path_params] == [inspect.Parameter.POSITIONAL_OR_KEYWORD] * path_params, op.id
        assert set(kinds[path_params:]) <= {inspect.Parameter.KEYWORD_ONLY}, op.id


def test_every_event_type_parses_to_its_model() -> None:
    event_models = typing.get_args(types.Event)
    assert types.UnknownEvent in event_models
    known = [m for m in event_models if m is not types.UnknownEvent]
    for model in known:
        kind = typing.get_args(typing.get_type_hints(model)["type"])[0]
        assert isinstance(types.parse_event({"type": kind}), model), kind


def test_annotations_evaluate_at_runtime_for_introspection_tools() -> None:
    # typing.get_type_hints evaluates the postponed annotations: a name imported only for type
    # checking, or `X | None` on Python 3.9, would raise here (and in tools that introspect).
    import inspect

    from platform_api import webhooks

    failures: "list[str]" = []
    for module in (platform_api, types, webhooks):
        for name in dir(module):
            obj = getattr(module, name)
            targets = [obj] if inspect.isfunction(obj) else []
            if inspect.isclass(obj):
                targets = [obj, *[member for _, member in inspect.getmembers(obj, inspect.isfunction)]]
            for target in targets:
                try:
                    typing.get_type_hints(target)
                except Exception as error:  # noqa: BLE001 - collected and reported
                    failures.append(f"{name}.{getattr(target, '__name__', '?')}: {error!r}")
    assert failures == []
