"""Offline validation of custom resources against the generated CRDs.

Does what the API server does on create/update, in its order: apply schema
defaults, check the OpenAPI schema, then evaluate the CEL rules
(``x-kubernetes-validations``) bottom-up. Transition rules (``oldSelf``) run
only when an old object is given.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import cel
import jsonschema
import yaml

CRD_DIR = Path(__file__).resolve().parents[3] / "crds"


class Invalid(Exception):
    """The resource would be rejected; the message is the schema's."""


def load_crds() -> dict[str, dict[str, Any]]:
    """The generated CRDs' root schemas, by kind."""
    schemas = {}
    for path in sorted(CRD_DIR.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        schemas[crd["spec"]["names"]["kind"]] = crd["spec"]["versions"][0]["schema"][
            "openAPIV3Schema"
        ]
    return schemas


def validate_resource(obj: dict[str, Any], old: dict[str, Any] | None = None) -> dict[str, Any]:
    """Validate a custom resource; returns it with schema defaults applied."""
    schema = load_crds()[obj["kind"]]
    obj = with_defaults(copy.deepcopy(obj), schema)
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(obj), key=str)
    if errors:
        first = errors[0]
        path = ".".join(str(p) for p in first.absolute_path)
        raise Invalid(f"{path}: {first.message}")
    _check_rules(obj, old and with_defaults(copy.deepcopy(old), schema), schema, "")
    return obj


def with_defaults(value: Any, schema: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        for name, sub in schema.get("properties", {}).items():
            if name not in value and "default" in sub:
                value[name] = copy.deepcopy(sub["default"])
            if name in value:
                value[name] = with_defaults(value[name], sub)
    elif isinstance(value, list) and "items" in schema:
        return [with_defaults(v, schema["items"]) for v in value]
    return value


def _check_rules(value: Any, old: Any, schema: dict[str, Any], path: str) -> None:
    if isinstance(value, dict):
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                old_sub = old.get(name) if isinstance(old, dict) else None
                _check_rules(value[name], old_sub, sub, f"{path}.{name}")
    elif isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            _check_rules(item, None, schema["items"], f"{path}[{index}]")
    for rule in schema.get("x-kubernetes-validations", []):
        uses_old = "oldSelf" in rule["rule"]
        if uses_old and old is None:
            continue
        context = {"self": value, "oldSelf": old} if uses_old else {"self": value}
        if cel.evaluate(rule["rule"], context) is not True:
            raise Invalid(f"{path or '<root>'}: {rule['message']}")
