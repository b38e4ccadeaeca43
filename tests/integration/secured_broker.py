"""A broker with every kind of listener, and the certificates and client settings to reach
it: PLAINTEXT (inter-broker), SSL with required client certificates (mTLS), SASL_SSL and
SASL_PLAINTEXT offering PLAIN (users from Kafka's JAAS syntax) and SCRAM. A test CA signs
the broker's certificate (SANs 127.0.0.1 and localhost) and the clients'."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from broker_process import Broker, BrokerFactory, free_port, unique_name
from certificates import Issued, certificate_authority, issue
from confluent_kafka import Consumer, Producer
from oauth_tokens import ISSUER, RSA_KEY, jwks, public_jwk

PLAIN_USERS = {"bob": "bob-secret", "carol": "carol-secret"}
PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    + " ".join(f'user_{name}="{password}"' for name, password in PLAIN_USERS.items())
    + ";"
)


@dataclass
class SecuredBroker:
    broker: Broker
    directory: Path
    ca: Issued
    ssl_port: int
    sasl_ssl_port: int
    sasl_plaintext_port: int

    @property
    def ca_file(self) -> Path:
        return self.directory / "ca.pem"

    @property
    def broker_key_store(self) -> Path:
        return self.directory / "broker.pem"

    def ssl_bootstrap(self) -> str:
        return f"127.0.0.1:{self.ssl_port}"

    def sasl_ssl_bootstrap(self) -> str:
        return f"127.0.0.1:{self.sasl_ssl_port}"

    def sasl_plaintext_bootstrap(self) -> str:
        return f"127.0.0.1:{self.sasl_plaintext_port}"

    def client_certificate(
        self, name: str, ca: Issued | None = None, **kwargs: object
    ) -> tuple[Path, Path]:
        """(certificate, key) files for a client called ``name``, signed by ``ca``
        (default: the broker's CA)."""
        issued = issue(ca or self.ca, name, **kwargs)  # type: ignore[arg-type]
        cert, key = self.directory / f"{name}.crt", self.directory / f"{name}.key"
        cert.write_bytes(issued.cert_pem)
        key.write_bytes(issued.key_pem)
        return cert, key


def secured_broker(
    make: BrokerFactory, directory: Path, extra: dict[str, str] | None = None
) -> SecuredBroker:
    ca = certificate_authority()
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "ca.pem").write_bytes(ca.cert_pem)
    issue(ca, "broker").write_pem(directory / "broker.pem")
    broker = make(start=False)
    ports = free_port(), free_port(), free_port()
    broker.settings.update(
        {
            "listeners": f"PLAINTEXT://{broker.bootstrap},SSL://127.0.0.1:{ports[0]},"
            f"SASL_SSL://127.0.0.1:{ports[1]},SASL_PLAINTEXT://127.0.0.1:{ports[2]}",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(directory / "broker.pem"),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(directory / "ca.pem"),
            "listener.name.ssl.ssl.client.auth": "required",
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
            "sasl.jaas.config": PLAIN_JAAS,
            "ssl.reload.check.interval.ms": "200",
            **(extra or {}),
        }
    )
    broker.start()
    return SecuredBroker(broker, directory, ca, *ports)


def oauthbearer_settings(directory: Path) -> dict[str, str]:
    """Broker settings offering OAUTHBEARER besides PLAIN, for tokens of the test issuer
    signed with ``oauth_tokens.RSA_KEY`` (key id ``key-1``), checked against a JWKS file
    written into ``directory``."""
    keys = directory / "jwks.json"
    keys.write_bytes(jwks(public_jwk(RSA_KEY, "key-1")))
    return {
        "sasl.enabled.mechanisms": "PLAIN,OAUTHBEARER",
        "sasl.oauthbearer.jwks.endpoint.url": keys.as_uri(),
        "sasl.oauthbearer.expected.issuer": ISSUER,
    }


def confluent_round_trip(settings: dict[str, Any], topic: str, records: list[bytes]) -> list[bytes]:
    """Produce ``records`` to partition 0 of ``topic`` with confluent-kafka, then consume
    them back in a new group; what was consumed within 30 s."""
    producer = Producer(settings)
    for value in records:
        producer.produce(topic, value, partition=0)
    assert producer.flush(30) == 0
    consumer = Consumer({**settings, "group.id": unique_name("g"), "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    values: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(values) < len(records) and time.monotonic() < deadline:
        message = consumer.poll(1)
        if message is not None and message.error() is None:
            values.append(message.value())
    consumer.close()
    return values
