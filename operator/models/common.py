"""Types shared by several custom resources."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StrictInt, StrictStr, WithJsonSchema

from .base import Schema

KafkaConfig = Annotated[
    dict[str, StrictStr | StrictInt],
    WithJsonSchema(
        {
            "type": "object",
            "maxProperties": 256,
            # A map of int-or-string: CEL rules can then index it by key (the API server
            # cannot see into a preserve-unknown-fields object), at the price of quoting
            # booleans and decimals ("false", "0.5").
            "additionalProperties": {"x-kubernetes-int-or-string": True},
            "description": "Kafka configuration in Kafka's own names, e.g. retention.ms; "
            'integers or strings (quote booleans and decimals: "false", "0.5").',
        }
    ),
]
"""Kafka-named settings; values are integers or strings (Kafka reads every value as text)."""

KubeObject = Annotated[
    dict[str, Any],
    WithJsonSchema({"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
]
"""A Kubernetes sub-object (affinity, security context, ...), validated where it is used."""

KubeObjectList = Annotated[
    list[dict[str, Any]],
    WithJsonSchema(
        {
            "type": "array",
            "maxItems": 64,
            "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        }
    ),
]

Quantity = Annotated[
    str,
    Field(pattern=r"^[0-9]+(\.[0-9]+)?(m|k|Ki|Mi|Gi|Ti|Pi|Ei|M|G|T|P|E)?$", max_length=32),
]
"""A Kubernetes resource quantity such as 500m or 10Gi."""

DnsLabel = Annotated[str, Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)]


class Resources(Schema):
    """CPU and memory requests and limits of a container."""

    requests: dict[str, Quantity] | None = None
    limits: dict[str, Quantity] | None = None


class Condition(Schema):
    """A status condition in the Kubernetes convention."""

    type: Annotated[str, Field(max_length=64)]
    status: Literal["True", "False", "Unknown"]
    reason: Annotated[str, Field(pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")]
    message: Annotated[str, Field(max_length=4096)] = ""
    observed_generation: int | None = None
    last_transition_time: str | None = None


class Conditions(Schema):
    """Status fields every resource carries."""

    observed_generation: int | None = None
    """The metadata.generation the conditions describe; Ready means nothing for older ones."""
    conditions: Annotated[list[Condition], Field(max_length=16)] = []
