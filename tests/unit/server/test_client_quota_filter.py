"""DescribeClientQuotas refuses the filters a Kafka 4.3.1 broker refuses, with its code and
message (checked against one), and accepts the rest."""

from __future__ import annotations

import pytest
from kio.schema.describe_client_quotas.v1.request import ComponentData

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.server.handlers.describe_client_quotas import check_filter

EXACT, DEFAULT, SPECIFIED = 0, 1, 2


def component(kind: str, match_type: int, match: str | None = None) -> ComponentData:
    return ComponentData(entity_type=kind, match_type=match_type, match=match)


@pytest.mark.parametrize(
    "components",
    [
        [],
        [component("user", SPECIFIED)],
        [component("user", EXACT, "alice"), component("client-id", DEFAULT)],
        [component("ip", EXACT, "10.0.0.1")],
    ],
)
def test_filters_kafka_accepts(components: list[ComponentData]) -> None:
    check_filter(components)


def invalid(message: str) -> tuple[ErrorCode, str]:
    return ErrorCode.invalid_request, message


IP_MIXED = invalid(
    "Invalid entity filter component combination. IP filter component should not be used "
    "with user or clientId filter component."
)


@pytest.mark.parametrize(
    ("components", "expected"),
    [
        ([component("", SPECIFIED)], invalid("Invalid empty entity type.")),
        (
            [component("user", SPECIFIED), component("user", EXACT, "x")],
            invalid("Entity type user cannot appear more than once in the filter."),
        ),
        (
            [component("topic", SPECIFIED)],
            (ErrorCode.unsupported_version, "Unsupported entity type topic"),
        ),
        (
            [component("user", EXACT)],
            invalid("Request specified MATCH_TYPE_EXACT, but set match string to null."),
        ),
        (
            [component("user", DEFAULT, "x")],
            invalid("Request specified MATCH_TYPE_DEFAULT, but also specified a match string."),
        ),
        (
            [component("user", SPECIFIED, "x")],
            invalid("Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."),
        ),
        ([component("user", 7)], invalid("Unknown match type 7")),
        ([component("client-id", SPECIFIED), component("ip", SPECIFIED)], IP_MIXED),
    ],
)
def test_filters_kafka_refuses(
    components: list[ComponentData], expected: tuple[ErrorCode, str]
) -> None:
    with pytest.raises(KafkaError) as refused:
        check_filter(components)
    assert (refused.value.code, refused.value.message) == expected
