"""Kafka's listeners and their security on one broker, judged by the real clients with
their usual settings: confluent-kafka, kafka-python, aiokafka, kcat and Kafka's own console
tools produce and consume over SSL with client certificates (mTLS) and over SASL_SSL and
SASL_PLAINTEXT with PLAIN; each listener advertises its own address; bad credentials, bad
certificates and bad frames are refused while the broker goes on serving."""

from __future__ import annotations

import asyncio
import datetime
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiokafka
import kafka
import pytest
from aiokafka.helpers import create_ssl_context
from broker_process import BrokerFactory, unique_name
from certificates import certificate_authority, issue
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource
from cryptography import x509
from kafka_tools import kafka_tool
from kafka_wire import WireClient, api_versions_request, metadata_request
from sasl_wire import (
    SASL_AUTHENTICATION_FAILED,
    UNSUPPORTED_SASL_MECHANISM,
    authenticate,
    closed,
    handshake,
    plain_token,
)
from secured_broker import PLAIN_USERS, SecuredBroker, confluent_round_trip, secured_broker

RECORDS = [b"record-%d" % i for i in range(5)]
KCAT = shutil.which("kcat")


@pytest.fixture(scope="module")
def secured(
    module_broker_factory: BrokerFactory, tmp_path_factory: pytest.TempPathFactory
) -> SecuredBroker:
    return secured_broker(module_broker_factory, tmp_path_factory.mktemp("certificates"))


# -- each client's settings for each listener ---------------------------------------------


SCRAM_USER = ("dave", "dave-secret")  # given SCRAM credentials with kafka-configs


def login(mechanism: str) -> tuple[str, str]:
    return ("bob", "bob-secret") if mechanism == "PLAIN" else SCRAM_USER


def librdkafka_settings(
    secured: SecuredBroker, listener: str, mechanism: str = "PLAIN"
) -> dict[str, str]:
    """confluent-kafka's and kcat's (librdkafka's) settings for ``listener``."""
    if listener == "SSL":
        cert, key = secured.client_certificate("alice")
        return {
            "bootstrap.servers": secured.ssl_bootstrap(),
            "security.protocol": "SSL",
            "ssl.ca.location": str(secured.ca_file),
            "ssl.certificate.location": str(cert),
            "ssl.key.location": str(key),
        }
    bootstrap = (
        secured.sasl_ssl_bootstrap()
        if listener == "SASL_SSL"
        else secured.sasl_plaintext_bootstrap()
    )
    user, password = login(mechanism)
    settings = {
        "bootstrap.servers": bootstrap,
        "security.protocol": listener,
        "sasl.mechanism": mechanism,
        "sasl.username": user,
        "sasl.password": password,
    }
    if listener == "SASL_SSL":
        settings["ssl.ca.location"] = str(secured.ca_file)
    return settings


def python_settings(
    secured: SecuredBroker, listener: str, mechanism: str = "PLAIN"
) -> dict[str, Any]:
    """kafka-python's and aiokafka's keyword settings (without the TLS context)."""
    rdkafka = librdkafka_settings(secured, listener, mechanism)
    settings: dict[str, Any] = {
        "bootstrap_servers": rdkafka["bootstrap.servers"],
        "security_protocol": listener,
    }
    if listener.startswith("SASL"):
        user, password = login(mechanism)
        settings.update(sasl_mechanism=mechanism, sasl_plain_username=user,
                        sasl_plain_password=password)  # fmt: skip
    return settings


def java_config(secured: SecuredBroker, listener: str, path: Path, mechanism: str) -> Path:
    """A client properties file as Kafka's tools take it."""
    lines = [f"security.protocol={listener}"]
    if listener in ("SSL", "SASL_SSL"):
        lines += ["ssl.truststore.type=PEM", f"ssl.truststore.location={secured.ca_file}"]
    if listener == "SSL":
        cert, key = secured.client_certificate("java-client")
        key_store = path.with_suffix(".pem")
        key_store.write_bytes(key.read_bytes() + cert.read_bytes())
        lines += ["ssl.keystore.type=PEM", f"ssl.keystore.location={key_store}"]
    elif mechanism == "PLAIN":
        lines += [
            "sasl.mechanism=PLAIN",
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required"
            ' username="carol" password="carol-secret";',
        ]
    else:
        user, password = SCRAM_USER
        lines += [
            f"sasl.mechanism={mechanism}",
            "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required"
            f' username="{user}" password="{password}";',
        ]
    path.write_text("\n".join(lines) + "\n")
    return path


# -- produce and consume with each client ---------------------------------------------------


def with_confluent(
    secured: SecuredBroker, listener: str, topic: str, mechanism: str = "PLAIN"
) -> list[bytes]:
    return confluent_round_trip(librdkafka_settings(secured, listener, mechanism), topic, RECORDS)


def with_kafka_python(
    secured: SecuredBroker, listener: str, topic: str, mechanism: str = "PLAIN"
) -> list[bytes]:
    settings = python_settings(secured, listener, mechanism)
    if listener in ("SSL", "SASL_SSL"):
        settings.update(ssl_cafile=str(secured.ca_file))
    if listener == "SSL":
        cert, key = secured.client_certificate("kafka-python")
        settings.update(ssl_certfile=str(cert), ssl_keyfile=str(key))
    producer = kafka.KafkaProducer(**settings)
    for value in RECORDS:
        producer.send(topic, value, partition=0)
    producer.flush(30)
    producer.close()
    consumer = kafka.KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=15000,
                                   group_id=unique_name("g"), **settings)  # fmt: skip
    values = [message.value for _, message in zip(RECORDS, consumer, strict=False)]
    consumer.close()
    return values


def with_aiokafka(
    secured: SecuredBroker, listener: str, topic: str, mechanism: str = "PLAIN"
) -> list[bytes]:
    settings = python_settings(secured, listener, mechanism)
    if listener in ("SSL", "SASL_SSL"):
        cert = key = None
        if listener == "SSL":
            cert, key = (str(p) for p in secured.client_certificate("aiokafka"))
        settings["ssl_context"] = create_ssl_context(
            cafile=str(secured.ca_file), certfile=cert, keyfile=key
        )

    async def run() -> list[bytes]:
        producer = aiokafka.AIOKafkaProducer(**settings)
        await producer.start()
        try:
            for value in RECORDS:
                await producer.send_and_wait(topic, value, partition=0)
        finally:
            await producer.stop()
        consumer = aiokafka.AIOKafkaConsumer(topic, auto_offset_reset="earliest",
                                             group_id=unique_name("g"), **settings)  # fmt: skip
        await consumer.start()
        try:
            return [(await asyncio.wait_for(consumer.getone(), 30)).value for _ in RECORDS]
        finally:
            await consumer.stop()

    return asyncio.run(run())


def with_kcat(
    secured: SecuredBroker, listener: str, topic: str, mechanism: str = "PLAIN"
) -> list[bytes]:
    if KCAT is None:
        pytest.skip("kcat is not installed (apt-get install kcat)")
    settings = librdkafka_settings(secured, listener, mechanism)
    options = [arg for key, value in settings.items() if key != "bootstrap.servers"
               for arg in ("-X", f"{key}={value}")]  # fmt: skip
    base = [KCAT, "-b", settings["bootstrap.servers"], *options, "-t", topic, "-p", "0"]
    lines = b"".join(value + b"\n" for value in RECORDS)
    run_kcat([*base, "-P"], lines)
    consumed = run_kcat([*base, "-C", "-o", "beginning", "-c", str(len(RECORDS)), "-e"], b"")
    return consumed.splitlines()


def run_kcat(command: list[str], stdin: bytes) -> bytes:
    done = subprocess.run(command, input=stdin, timeout=30, capture_output=True, check=False)
    assert done.returncode == 0, f"kcat exited {done.returncode}: {done.stderr.decode()}"
    return done.stdout


def with_java(
    secured: SecuredBroker, listener: str, topic: str, mechanism: str = "PLAIN"
) -> list[bytes]:
    path = secured.directory / f"java-{listener}-{mechanism}.properties"
    config = java_config(secured, listener, path, mechanism)
    bootstrap = librdkafka_settings(secured, listener)["bootstrap.servers"]
    kafka_tool("kafka-console-producer", "--bootstrap-server", bootstrap, "--topic", topic,
               "--command-config", str(config),
               stdin=b"\n".join(RECORDS).decode() + "\n")  # fmt: skip
    consumed = kafka_tool("kafka-console-consumer", "--bootstrap-server", bootstrap, "--topic",
                          topic, "--from-beginning", "--max-messages", str(len(RECORDS)),
                          "--command-config", str(config))  # fmt: skip
    return [line.encode() for line in consumed.splitlines()]


CLIENTS: dict[str, Callable[[SecuredBroker, str, str, str], list[bytes]]] = {
    "confluent-kafka": with_confluent,
    "kafka-python": with_kafka_python,
    "aiokafka": with_aiokafka,
    "kcat": with_kcat,
    "java": with_java,
}


@pytest.mark.parametrize("listener", ["SSL", "SASL_SSL", "SASL_PLAINTEXT"])
@pytest.mark.parametrize("client", list(CLIENTS))
def test_every_client_produces_and_consumes_on_every_secured_listener(
    secured: SecuredBroker, client: str, listener: str
) -> None:
    topic = unique_name(f"{client}-{listener.lower()}")
    assert CLIENTS[client](secured, listener, topic, "PLAIN") == RECORDS


@pytest.fixture(scope="module")
def scram_user(secured: SecuredBroker) -> str:
    """Dave's SCRAM credentials, given through Kafka's own kafka-configs, one mechanism a
    call (Kafka 4 refuses to alter a user twice in one request)."""
    user, password = SCRAM_USER
    for credential in (f"SCRAM-SHA-256=[password={password}]",
                       f"SCRAM-SHA-512=[iterations=8192,password={password}]"):  # fmt: skip
        kafka_tool("kafka-configs", "--bootstrap-server", secured.broker.bootstrap, "--alter",
                   "--add-config", credential, "--entity-type", "users",
                   "--entity-name", user)  # fmt: skip
    return user


@pytest.mark.parametrize(
    ("listener", "mechanism"),
    [
        ("SASL_SSL", "SCRAM-SHA-512"),
        ("SASL_SSL", "SCRAM-SHA-256"),
        ("SASL_PLAINTEXT", "SCRAM-SHA-256"),
    ],
)
@pytest.mark.parametrize("client", list(CLIENTS))
def test_every_client_logs_in_with_scram_credentials_set_by_kafka_configs(
    secured: SecuredBroker, scram_user: str, client: str, listener: str, mechanism: str
) -> None:
    topic = unique_name(f"{client}-{mechanism.lower()}")
    assert CLIENTS[client](secured, listener, topic, mechanism) == RECORDS


def test_each_listener_advertises_its_own_address(secured: SecuredBroker) -> None:
    for listener in ("SSL", "SASL_SSL", "SASL_PLAINTEXT"):
        settings = librdkafka_settings(secured, listener)
        brokers = AdminClient(settings).list_topics(timeout=15).brokers
        assert [f"{b.host}:{b.port}" for b in brokers.values()] == [settings["bootstrap.servers"]]
    plaintext = AdminClient({"bootstrap.servers": secured.broker.bootstrap})
    assert [f"{b.host}:{b.port}" for b in plaintext.list_topics(timeout=15).brokers.values()] == [
        secured.broker.bootstrap
    ]


def test_describe_configs_shows_no_password_key_or_jaas_login(secured: SecuredBroker) -> None:
    """Sensitive configs are listed with null values, as Kafka lists them."""
    admin = AdminClient({"bootstrap.servers": secured.broker.bootstrap})
    resource = ConfigResource(ConfigResource.Type.BROKER, "0")
    described = admin.describe_configs([resource])[resource].result(timeout=30)
    jaas = described["sasl.jaas.config"]
    assert jaas.is_sensitive and jaas.value is None
    assert all(synonym.value is None for synonym in jaas.synonyms.values())
    assert described["ssl.keystore.location"].value == str(secured.broker_key_store)
    everything = " ".join(f"{entry.name}={entry.value}" for entry in described.values())
    for user, password in PLAIN_USERS.items():
        assert password not in everything, user


# -- bad input: refused, the broker unharmed ------------------------------------------------


def authentications(secured: SecuredBroker, listener: str, mechanism: str, result: str) -> float:
    """``odradek_authentications``: SASL logins and TLS handshakes (mechanism TLS)."""
    return secured.broker.metric(
        "odradek_authentications_total", listener=listener, mechanism=mechanism, result=result
    )


def test_a_wrong_password_is_refused_with_kafkas_message(secured: SecuredBroker) -> None:
    failures = authentications(secured, "SASL_PLAINTEXT", "PLAIN", "failure")
    with sasl_connection(secured) as wire:
        assert handshake(wire, "PLAIN").error_code.value == 0
        answer = authenticate(wire, plain_token("bob", "not-bobs-password"))
        assert answer.error_code.value == SASL_AUTHENTICATION_FAILED
        assert answer.error_message == "Authentication failed: Invalid username or password"
        assert closed(wire)
    assert "not-bobs-password" not in secured.broker.log_path.read_text()
    assert authentications(secured, "SASL_PLAINTEXT", "PLAIN", "failure") == failures + 1


def sasl_connection(secured: SecuredBroker) -> WireClient:
    return WireClient.to(secured.sasl_plaintext_bootstrap())


def test_sasl_listener_closes_a_connection_that_skips_authentication(
    secured: SecuredBroker,
) -> None:
    with sasl_connection(secured) as wire:
        assert wire.api_versions().error_code.value == 0  # always served
        wire.send(metadata_request(None))
        assert closed(wire)


def test_an_unknown_mechanism_is_refused_with_the_ones_offered(secured: SecuredBroker) -> None:
    with sasl_connection(secured) as wire:
        answer = handshake(wire, "GSSAPI")
        assert answer.error_code.value == UNSUPPORTED_SASL_MECHANISM
        assert list(answer.mechanisms) == ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
        assert closed(wire)


def test_a_garbage_token_fails_authentication_and_closes_only_that_connection(
    secured: SecuredBroker,
) -> None:
    with sasl_connection(secured) as wire:
        assert handshake(wire, "SCRAM-SHA-512").error_code.value == 0
        answer = authenticate(wire, b"\xff\x00garbage")
        assert answer.error_code.value == SASL_AUTHENTICATION_FAILED
        assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in answer.error_message
        assert closed(wire)
    assert with_confluent(secured, "SASL_SSL", unique_name("after-garbage")) == RECORDS


def tls_peer(port: int, context: ssl.SSLContext) -> dict[str, Any]:
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        return tls.getpeercert()  # type: ignore[return-value]


def test_untrusted_expired_and_missing_client_certificates_are_refused(
    secured: SecuredBroker, tmp_path: Path
) -> None:
    stranger = certificate_authority("stranger")
    unwelcome = {
        "untrusted": secured.client_certificate("mallory", stranger),
        "expired": secured.client_certificate("expired", valid_for=datetime.timedelta(seconds=-60)),
    }
    failures = authentications(secured, "SSL", "TLS", "failure")
    for name, (cert, key) in {**unwelcome, "none": (None, None)}.items():
        settings = librdkafka_settings(secured, "SSL")
        settings.pop("ssl.certificate.location")
        settings.pop("ssl.key.location")
        if cert is not None:
            settings.update({"ssl.certificate.location": str(cert), "ssl.key.location": str(key)})
        admin = AdminClient({**settings, "socket.timeout.ms": "3000"})
        with pytest.raises(
            KafkaException, match=r"Failed to get metadata|Broker transport failure"
        ):
            admin.list_topics(timeout=4)
        refused = authentications(secured, "SSL", "TLS", "failure")
        assert refused > failures, f"the {name} certificate's handshake is not counted"
        failures = refused
    successes = authentications(secured, "SSL", "TLS", "success")
    assert with_confluent(secured, "SSL", unique_name("after-refusals")) == RECORDS
    assert authentications(secured, "SSL", "TLS", "success") > successes


def test_a_plaintext_client_on_a_tls_port_is_disconnected(secured: SecuredBroker) -> None:
    failures = authentications(secured, "SSL", "TLS", "failure")
    with WireClient("127.0.0.1", secured.ssl_port) as wire:
        wire.send(api_versions_request())
        assert closed(wire)
    assert authentications(secured, "SSL", "TLS", "failure") == failures + 1
    assert with_confluent(secured, "SASL_SSL", unique_name("after-plaintext")) == RECORDS


def test_a_certificate_replaced_on_disk_is_served_without_a_restart(
    secured: SecuredBroker,
) -> None:
    context = ssl.create_default_context(cafile=str(secured.ca_file))
    before = tls_peer(secured.sasl_ssl_port, context)
    expiry = "odradek_tls_certificate_expiry_timestamp_seconds"
    served = x509.load_pem_x509_certificates(secured.broker_key_store.read_bytes())[0]
    for listener in ("SSL", "SASL_SSL"):
        metric = secured.broker.metric(expiry, listener=listener)
        assert metric == served.not_valid_after_utc.timestamp()
    replacement = secured.directory / "broker.pem.new"
    renewed = issue(secured.ca, "broker-renewed", valid_for=datetime.timedelta(days=30))
    renewed.write_pem(replacement)
    replacement.replace(secured.broker_key_store)
    deadline = time.monotonic() + 10
    while True:
        after = tls_peer(secured.sasl_ssl_port, context)
        if after["serialNumber"] != before["serialNumber"]:
            break
        assert time.monotonic() < deadline, "the new certificate was not picked up"
        time.sleep(0.2)
    assert dict(item[0] for item in after["subject"])["commonName"] == "broker-renewed"
    assert with_confluent(secured, "SASL_SSL", unique_name("after-renewal")) == RECORDS
    new_expiry = renewed.certificate.not_valid_after_utc.timestamp()
    assert secured.broker.metric(expiry, listener="SASL_SSL") == new_expiry
