"""Turn pydantic JSON Schema into a Kubernetes structural OpenAPI v3 schema."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

_DROPPED = {"title", "$defs"}


def structural_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's schema with references inlined and nullability folded away.

    Optional fields are simply not required (the operator never writes null),
    so ``anyOf [X, null]`` becomes ``X``; ``additionalProperties: false`` goes
    because the API server prunes unknown fields instead.
    """
    schema = model.model_json_schema(by_alias=True, mode="validation")
    definitions: dict[str, Any] = schema.get("$defs", {})
    return _convert(schema, definitions)


def _convert(node: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    node = _resolve(node, definitions)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED or (key == "additionalProperties" and value is False):
            continue
        if key == "default":
            if value is not None:
                out[key] = _without_nulls(value)
        elif key == "properties":
            out[key] = {name: _convert(sub, definitions) for name, sub in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = _convert(value, definitions)
        elif key == "const":  # a one-value Literal; OpenAPI v3.0 has no const
            out["enum"] = [value]
        else:
            out[key] = value
    return out


def _resolve(node: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """Inline a $ref and drop the null branch of an anyOf, keeping sibling keywords."""
    siblings = dict(node)
    if "$ref" in siblings:
        target = definitions[siblings.pop("$ref").rsplit("/", 1)[-1]]
        return _resolve({**target, **siblings}, definitions)
    if "anyOf" in siblings:
        branches = [b for b in siblings.pop("anyOf") if b != {"type": "null"}]
        if len(branches) != 1:
            raise ValueError(f"structural schemas cannot express anyOf {branches}")
        return _resolve({**branches[0], **siblings}, definitions)
    return siblings


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value
