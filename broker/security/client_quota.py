"""Kafka's client quota entities (KIP-546) as pure logic: what AlterClientQuotas accepts
(``ClientQuotaControlManager``), what a DescribeClientQuotas filter matches
(``ClientQuotasImage``), and which entity's quota applies to a client (the precedence of
``ClientQuotaManager``'s default quota callback).

An entity is a set of (type, name) components, a name of None being the type's default
(``<default>`` in ``kafka-configs``). Users and client ids combine; an ip stands alone.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, NoReturn

from odradek.broker.protocol.errors import ErrorCode, KafkaError

USER, CLIENT_ID, IP = "user", "client-id", "ip"
ENTITY_TYPES = (USER, CLIENT_ID, IP)

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
CONNECTION_CREATION_RATE = "connection_creation_rate"

# Kafka's QuotaConfig: the keys each kind of entity takes, and whether they are integral.
USER_AND_CLIENT_KEYS = {
    PRODUCER_BYTE_RATE: True,
    CONSUMER_BYTE_RATE: True,
    REQUEST_PERCENTAGE: False,
    CONTROLLER_MUTATION_RATE: False,
}
IP_KEYS = {CONNECTION_CREATION_RATE: True}
_INT_MAX = 2**31 - 1

# Components sorted by type, so equal entities are equal tuples.
QuotaEntity = tuple[tuple[str, str | None], ...]
QuotaValues = Mapping[str, float]


def entity_of(components: Iterable[tuple[str, str | None]]) -> QuotaEntity:
    """The entity of a request's components; a type given twice keeps its last name, as
    Kafka's request turns the list into a map."""
    return tuple(sorted(dict(components).items()))


def describe_entity(entity: QuotaEntity) -> str:
    """The entity as Kafka's ``ClientQuotaEntity.toString`` shows it in messages."""
    entries = ", ".join(f"{kind}={name}" for kind, name in entity)  # None shows as null
    return f"ClientQuotaEntity(entries={{{entries}}})"


def check_entity(entity: QuotaEntity) -> Mapping[str, bool]:
    """Raise Kafka's INVALID_REQUEST for an entity no quota can be set on; else the keys
    it takes (name -> integral)."""
    if not entity:
        _invalid("Invalid empty client quota entity")
    for kind, name in entity:
        if kind not in ENTITY_TYPES:
            _invalid(f"Unhandled client quota entity type: {kind}")
        if name is not None and not name:
            _invalid(f"Empty {kind} not supported")
    kinds = dict(entity)
    if IP in kinds:
        if len(kinds) > 1:
            # sic: Kafka's message lacks the space
            _invalid(
                "Invalid quota entity combination, IP entity shouldnot be combined with User "
                "or ClientId"
            )
        if not _valid_ip_entity(kinds[IP]):
            _invalid(f"{kinds[IP]} is not a valid IP or resolvable host.")
        return IP_KEYS
    return USER_AND_CLIENT_KEYS


def check_value(keys: Mapping[str, bool], key: str, value: float) -> None:
    """Raise Kafka's INVALID_REQUEST for a quota value the entity cannot take."""
    integral = keys.get(key)
    if integral is None:
        _invalid(f"Invalid configuration key {key}")
    if value <= 0.0:
        _invalid(f"Quota {key} must be greater than 0")
    if not integral:
        return
    if key == CONNECTION_CREATION_RATE and value > _INT_MAX:
        _invalid(f"Proposed value for {key} is too large for an INT.")
    if abs(math.fmod(value, 1.0)) > 1e-6:
        _invalid(f"{key} cannot be a fractional value.")


def altered(
    current: QuotaValues, ops: Iterable[tuple[str, float | None]], keys: Mapping[str, bool]
) -> dict[str, float]:
    """``current`` after ``ops`` (a value of None removes the key), checked as Kafka's
    controller checks them: removals of absent keys are no-ops, every set value valid."""
    values = dict(current)
    for key, value in ops:
        if value is None:
            values.pop(key, None)
        else:
            check_value(keys, key, value)
            values[key] = value
    return values


def check_filter_components(exact: Mapping[str, str | None], specified: Collection[str]) -> None:
    if (IP in exact or IP in specified) and (
        USER in exact or USER in specified or CLIENT_ID in exact or CLIENT_ID in specified
    ):
        _invalid(
            "Invalid entity filter component combination. IP filter component should not be "
            "used with user or clientId filter component."
        )


def matches(
    entity: QuotaEntity, exact: Mapping[str, str | None], specified: Collection[str], strict: bool
) -> bool:
    """Whether a DescribeClientQuotas filter selects ``entity``: every exact component
    (a name, or None for the default) and every specified type present, and with
    ``strict`` nothing else."""
    components = dict(entity)
    if strict and len(components) != len(exact) + len(specified):
        return False
    named = all(kind in components and components[kind] == name for kind, name in exact.items())
    return named and all(kind in components for kind in specified)


def precedence(user: str, client_id: str) -> tuple[QuotaEntity, ...]:
    """The entities that may hold a client's quota, the one that wins first (Kafka's
    ``/config/users/<user>/clients/<client-id>`` ... ``/config/clients/<default>``)."""
    return (
        ((CLIENT_ID, client_id), (USER, user)),
        ((CLIENT_ID, None), (USER, user)),
        ((USER, user),),
        ((CLIENT_ID, client_id), (USER, None)),
        ((CLIENT_ID, None), (USER, None)),
        ((USER, None),),
        ((CLIENT_ID, client_id),),
        ((CLIENT_ID, None),),
    )


def resolve(
    quotas: Mapping[QuotaEntity, QuotaValues], user: str, client_id: str, key: str
) -> tuple[float, tuple[str, str]] | None:
    """The ``key`` quota that applies to ``user`` (the principal's name) with ``client_id``,
    and who shares it, as Kafka's metric tags: the user and/or client id the winning
    entity names (or defaults), "" for a type it leaves out. None: no quota."""
    for entity in precedence(user, client_id):
        values = quotas.get(entity)
        if values is not None and key in values:
            kinds = dict(entity)
            tags = (user if USER in kinds else "", client_id if CLIENT_ID in kinds else "")
            return values[key], tags
    return None


def user_of(principal: str) -> str:
    """A principal's name (``User:alice`` -> ``alice``), as user quotas name it."""
    return principal.partition(":")[2] or principal


def _valid_ip_entity(ip: str | None) -> bool:
    if ip is None:
        return True
    # Kafka also resolves host names here; Odradek takes addresses only, so an admin
    # request never waits for DNS on the event loop.
    try:
        ipaddress.ip_address(ip)
    except ValueError:
        return False
    return True


def _invalid(message: str) -> NoReturn:
    raise KafkaError(ErrorCode.invalid_request, message)


def encode_client_quota(entity: QuotaEntity, values: QuotaValues) -> dict[str, Any]:
    """One entity's quotas as stored (the embedded store's file, an etcd value)."""
    return {"entity": [list(component) for component in entity], "values": dict(values)}


def decode_client_quota(item: Mapping[str, Any]) -> tuple[QuotaEntity, QuotaValues]:
    return entity_of((kind, name) for kind, name in item["entity"]), dict(item["values"])


Alteration = tuple[QuotaEntity, Sequence[tuple[str, float | None]]]


def plan_alterations(
    current: Mapping[QuotaEntity, QuotaValues], alterations: Iterable[Alteration]
) -> tuple[dict[QuotaEntity, KafkaError | None], dict[QuotaEntity, QuotaValues]]:
    """What Kafka's controller makes of one AlterClientQuotas: each entity's outcome (None:
    accepted), in request order, and the new values of the accepted entities that change.

    As in ``ClientQuotaControlManager``, an entity given twice, or a key given twice in one
    entity, ends as "Ignoring duplicate entity" (its first alteration stands), and a
    failed entity changes nothing while the others are still applied."""
    results: dict[QuotaEntity, KafkaError | None] = {}
    changes: dict[QuotaEntity, QuotaValues] = {}
    for entity, ops in alterations:
        keys_seen: set[str] = set()
        for key, _ in ops:
            if key in keys_seen:
                results[entity] = KafkaError(
                    ErrorCode.invalid_request,
                    f"Duplicate quota key {key} not updating quota for this entity "
                    f"{describe_entity(entity)}",
                )
            keys_seen.add(key)
        if entity in results:
            results[entity] = KafkaError(
                ErrorCode.invalid_request, f"Ignoring duplicate entity {describe_entity(entity)}"
            )
            continue
        try:
            keys = check_entity(entity)
            before = current.get(entity, {})
            after = altered(before, ops, keys)
        except KafkaError as error:
            results[entity] = error
            continue
        results[entity] = None
        if after != before:
            changes[entity] = after
    return results, changes
