"""Build the SDK's stream event objects fast, equal to the ones the SDK builds itself.

The SDK builds an event with `construct_type(type_=RawMessageStreamEvent, value=data)`:
it validates `data` against the union of event classes and, if that fails, constructs
the variant named by `type` leniently. Its Python-level dispatch costs more than the
validation itself, so `event_builder` does the same in fewer steps:
- the two deltas that make up almost every stream (`text_delta`, `input_json_delta`),
  when their data has exactly the fields of the SDK's classes with the exact JSON types,
  are assembled directly, as pydantic's validation would leave them (same class, field
  values, fields set, extras), without running it;
- any other event is validated against its own class, picked by `type` (the union's
  variants differ by their `type` literal, so this is the member the union would pick);
- whatever does not validate goes to the SDK's `construct_type` itself.
`tests/test_fast_construction.py` checks equality with the SDK's own objects.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any

__all__ = ["event_builder"]

#: delta kind -> its one payload field, for the deltas assembled directly
HOT_DELTAS = {"text_delta": "text", "input_json_delta": "partial_json"}


def _variants(union_alias: Any) -> dict[str, type[Any]]:
    """`type` literal -> class, for an SDK `Annotated[Union[...], UnionDiscriminator]`."""
    union = typing.get_args(union_alias)[0]
    classes: dict[str, type[Any]] = {}
    for variant in typing.get_args(union):
        (literal,) = typing.get_args(variant.model_fields["type"].annotation)
        classes[literal] = variant
    return classes


def _assemble(cls: type[Any], values: dict[str, Any]) -> Any:
    """An instance as pydantic's validation leaves it for `values` (all fields, no extras)."""
    instance = object.__new__(cls)
    object.__setattr__(instance, "__dict__", values)
    object.__setattr__(instance, "__pydantic_fields_set__", set(values))
    object.__setattr__(instance, "__pydantic_extra__", {})
    object.__setattr__(instance, "__pydantic_private__", None)
    return instance


def _hot_deltas(delta_union: Any) -> dict[str, tuple[str, type[Any]]]:
    """Hot delta kinds whose SDK class is exactly `{payload: str, type: Literal}`."""
    classes = _variants(delta_union)
    hot: dict[str, tuple[str, type[Any]]] = {}
    for kind, payload in HOT_DELTAS.items():
        cls = classes.get(kind)
        fields = getattr(cls, "model_fields", {})
        if set(fields) == {payload, "type"} and fields[payload].annotation is str:
            hot[kind] = (payload, cls)  # type: ignore[assignment]
    return hot


def event_builder() -> Callable[[dict[str, Any]], Any]:
    """A function equal to `construct_type(type_=RawMessageStreamEvent, value=data)`, faster."""
    from anthropic._models import construct_type
    from anthropic.types import RawContentBlockDelta, RawMessageStreamEvent

    classes = _variants(RawMessageStreamEvent)
    delta_event = classes["content_block_delta"]
    hot = (
        _hot_deltas(RawContentBlockDelta)
        if list(delta_event.model_fields) == ["delta", "index", "type"]
        and delta_event.model_fields["index"].annotation is int
        else {}
    )

    def build(data: dict[str, Any]) -> Any:
        kind = data.get("type")
        if kind == "content_block_delta" and len(data) == 3:
            delta, index = data.get("delta"), data.get("index")
            if type(index) is int and type(delta) is dict and len(delta) == 2:
                delta_kind = delta.get("type")
                entry = hot.get(delta_kind) if type(delta_kind) is str else None
                if entry is not None and type(delta.get(entry[0])) is str:
                    payload, delta_class = entry
                    fields = {payload: delta[payload], "type": delta_kind}
                    built = _assemble(delta_class, fields)
                    return _assemble(delta_event, {"delta": built, "index": index, "type": kind})
        cls = classes.get(kind) if type(kind) is str else None
        if cls is not None:
            try:
                return cls.model_validate(data)
            except Exception:
                pass  # not valid: the SDK's own lenient construction decides, as it does live
        return construct_type(type_=RawMessageStreamEvent, value=data)

    return build
