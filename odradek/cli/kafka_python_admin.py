"""kafka-python's admin client for the commands librdkafka has no API for (client quotas,
transactions), configured from the same ``-X`` librdkafka properties as every other command
(the security ones translated; any other is refused by name).

kafka-python loads about a hundred request schemas on import: the commands import this
module only when they run, so every other command starts without it.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from kafka import KafkaAdminClient  # type: ignore[import-untyped]
from kafka.errors import KafkaError as KafkaPythonError  # type: ignore[import-untyped]
from kafka.errors import KafkaTimeoutError

from odradek.cli.client_options import CliError

# librdkafka property -> kafka-python argument, for the properties a secured cluster needs.
_TRANSLATED = {
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "sasl.mechanisms": "sasl_mechanism",
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
}

_NAMES_IN_CAPITALS = {"security.protocol", "sasl.mechanism", "sasl.mechanisms"}


def timeout_ms(args: argparse.Namespace) -> int:
    return int(args.timeout * 1000)


@contextlib.contextmanager
def admin_client(args: argparse.Namespace) -> Iterator[Any]:
    """An admin client on the cluster, closed after use; a failure to reach the cluster,
    or a request it did not answer, as ``CliError``."""
    try:
        admin = KafkaAdminClient(
            bootstrap_servers=args.bootstrap_server.split(","),
            request_timeout_ms=timeout_ms(args),
            bootstrap_timeout_ms=timeout_ms(args),
            client_id="odradek-cli",
            **translated(args.client_properties),
        )
    except KafkaTimeoutError:
        raise CliError(
            f"could not reach the cluster at {args.bootstrap_server} within {args.timeout:g} s"
        ) from None
    except KafkaPythonError as error:
        raise CliError(f"cannot reach the cluster at {args.bootstrap_server}: {error}") from None
    try:
        yield admin
    except KafkaPythonError as error:
        raise CliError(f"the cluster at {args.bootstrap_server} did not answer: {error}") from None
    finally:
        admin.close()


def translated(properties: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """kafka-python's arguments for librdkafka's security properties."""
    kwargs: dict[str, Any] = {}
    for key, value in properties:
        if key == "ssl.endpoint.identification.algorithm":
            kwargs["ssl_check_hostname"] = value.lower() == "https"
        elif key in _TRANSLATED:
            kwargs[_TRANSLATED[key]] = value.upper() if key in _NAMES_IN_CAPITALS else value
        else:
            raise CliError(f"-X {key}: this command takes only the security properties")
    return kwargs


def refused(error: KafkaPythonError, doing: str) -> CliError:
    """An error the cluster answered with, as a sentence: what failed and Kafka's reason."""
    reason = getattr(error, "description", None)
    code = getattr(error, "message", None)
    if reason and code:
        return CliError(f"{doing}: {code} ({reason[:1].lower()}{reason[1:].rstrip('.')})")
    return CliError(f"{doing}: {error}")
