"""Kafka's broker-wide connection limits, set at run time with Kafka's own kafka-configs and
enforced on raw connections: max.connections.per.ip and its overrides close the extra
connection; max.connections keeps a new connection waiting, lets the inter-broker listener
in over it and closes the least recently active client connection instead;
max.connection.creation.rate slows new connections down without closing any."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from broker_process import Broker, BrokerFactory, free_port
from kafka_tools import kafka_tool
from kafka_wire import WireClient, api_versions_request, recv_frame

pytestmark = pytest.mark.slow

DEFAULTS = ("--entity-type", "brokers", "--entity-default")
UPDATED_DEFAULTS = "Completed updating default config for brokers in the cluster.\n"


@dataclass(frozen=True)
class TwoListeners:
    broker: Broker
    internal: str  # the inter-broker listener; the broker's bootstrap is the client one


@pytest.fixture
def limited(broker_factory: BrokerFactory) -> TwoListeners:
    broker = broker_factory(start=False)
    internal = f"127.0.0.1:{free_port()}"
    broker.settings.update(
        {
            "listeners": f"EXTERNAL://{broker.bootstrap},INTERNAL://{internal}",
            "listener.security.protocol.map": "EXTERNAL:PLAINTEXT,INTERNAL:PLAINTEXT",
            "inter.broker.listener.name": "INTERNAL",
            "quota.window.num": "2",
            "quota.window.size.seconds": "1",
        }
    )
    return TwoListeners(broker.start(), internal)


def configs(bootstrap: str, *arguments: str) -> str:
    return kafka_tool("kafka-configs", "--bootstrap-server", bootstrap, *arguments)


def served(bootstrap: str, timeout: float = 10.0) -> WireClient:
    """A connection whose ApiVersions was answered (else the error of the attempt)."""
    client = WireClient.to(bootstrap, timeout)
    try:
        client.api_versions()
    except BaseException:
        client.close()
        raise
    return client


def closed_by_broker(client: WireClient, within_s: float) -> bool:
    client.sock.settimeout(within_s)
    try:
        return client.sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionError:
        return True


@pytest.fixture
def held() -> Iterator[list[WireClient]]:
    clients: list[WireClient] = []
    yield clients
    for client in clients:
        client.close()


def test_an_address_over_max_connections_per_ip_is_closed_unless_overridden(
    limited: TwoListeners, held: list[WireClient]
) -> None:
    broker = limited.broker
    done = configs(
        broker.bootstrap, "--alter", "--add-config", "max.connections.per.ip=3", *DEFAULTS
    )
    assert done == UPDATED_DEFAULTS
    held += [served(broker.bootstrap) for _ in range(3)]
    with pytest.raises(ConnectionError):
        served(broker.bootstrap)  # closed before its ApiVersions is read
    assert broker.metric("odradek_connections_refused_total", limit="max.connections.per.ip") == 1
    held.pop().close()
    time.sleep(0.2)  # the broker sees the close
    held.append(served(broker.bootstrap))
    for client in held:
        client.close()
    held.clear()
    time.sleep(0.2)

    overrides = "max.connections.per.ip.overrides=[localhost:5]"
    configs(broker.bootstrap, "--alter", "--add-config", overrides, *DEFAULTS)
    held += [served(broker.bootstrap) for _ in range(5)]  # localhost: 127.0.0.1
    with pytest.raises(ConnectionError):
        served(broker.bootstrap)
    for client in held:
        client.close()
    time.sleep(0.2)
    described = configs(broker.bootstrap, "--describe", *DEFAULTS)
    assert "max.connections.per.ip=3" in described
    assert "max.connections.per.ip.overrides=localhost:5" in described


def test_max_connections_waits_new_clients_and_makes_room_for_the_inter_broker_listener(
    limited: TwoListeners, held: list[WireClient]
) -> None:
    broker, internal = limited.broker, limited.internal
    configs(broker.bootstrap, "--alter", "--add-config", "max.connections=2", *DEFAULTS)
    time.sleep(0.2)  # kafka-configs' own connections close
    older, newer = served(broker.bootstrap), served(broker.bootstrap)
    held += [older, newer]
    waiting = WireClient.to(broker.bootstrap)  # the TCP connection is made ...
    held.append(waiting)
    correlation_id = waiting.send(api_versions_request())
    assert closed_by_broker(waiting, within_s=1.5) is False  # ... and left unanswered
    newer.api_versions()  # `older` is now the least recently active

    held.append(served(internal, timeout=5.0))  # not kept waiting by max.connections
    assert closed_by_broker(older, within_s=5.0)
    assert not closed_by_broker(newer, within_s=0.5)
    assert broker.metric("odradek_connections_refused_total", limit="max.connections") == 1

    # kafka-configs on the inter-broker listener raises the limit (its own connections may
    # take `newer`'s place meanwhile): the waiting connection is served
    configs(internal, "--alter", "--add-config", "max.connections=10", *DEFAULTS)
    waiting.sock.settimeout(5.0)
    frame = recv_frame(waiting.sock)
    assert int.from_bytes(frame[:4], "big") == correlation_id

    # lowered below what is open: client connections are closed down to it
    configs(internal, "--alter", "--add-config", "max.connections=1", *DEFAULTS)
    assert closed_by_broker(waiting, within_s=5.0)


def test_connections_over_max_connection_creation_rate_wait_but_are_all_served(
    limited: TwoListeners,
) -> None:
    broker = limited.broker
    configs(
        broker.bootstrap, "--alter", "--add-config", "max.connection.creation.rate=5", *DEFAULTS
    )
    time.sleep(2.5)  # kafka-configs' connections leave the window (2 samples of 1 s)
    started = time.monotonic()
    for _ in range(15):
        served(broker.bootstrap).close()
    # 5 at once, then each waits Kafka's throttle time: about 2 s for 15 (unthrottled, 0.05)
    assert time.monotonic() - started >= 1.5
    assert broker.metric("odradek_throttle_time_seconds_total", type="connection_accept") > 0
    assert broker.metric("odradek_connections_refused_total") == 0


def test_a_listeners_own_limit_is_set_described_and_enforced_per_broker(
    limited: TwoListeners, held: list[WireClient]
) -> None:
    broker, internal = limited.broker, limited.internal
    this_broker = ("--entity-type", "brokers", "--entity-name", "0")
    key = "listener.name.external.max.connections"
    done = configs(internal, "--alter", "--add-config", f"{key}=1", *this_broker)
    assert done == "Completed updating config for broker 0.\n"
    assert f"{key}=1 sensitive=false" in configs(internal, "--describe", *this_broker)
    rate = "listener.name.external.max.connection.creation.rate"
    configs(internal, "--alter", "--add-config", f"{rate}=1000", *DEFAULTS)
    assert f"{rate}=1000 sensitive=false" in configs(internal, "--describe", *DEFAULTS)

    held.append(served(broker.bootstrap))
    waiting = WireClient.to(broker.bootstrap)
    held.append(waiting)
    correlation_id = waiting.send(api_versions_request())
    assert closed_by_broker(waiting, within_s=1.5) is False  # the listener is full
    held[0].close()
    waiting.sock.settimeout(5.0)
    assert int.from_bytes(recv_frame(waiting.sock)[:4], "big") == correlation_id
