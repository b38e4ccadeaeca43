"""Drive a server exchange with the client side of real Kafka clients: kafka-python's SASL
mechanisms (``kafka.net.sasl``) and aiokafka's authenticators, run in-process token by
token as their connections would run them over SaslAuthenticate."""

from __future__ import annotations

from typing import Any

from odradek.broker.security.sasl_mechanism import SaslServerExchange


def run_kafka_python(client: Any, exchange: SaslServerExchange) -> None:
    """kafka-python's loop: send ``auth_bytes()``, hand the answer to ``receive`` until
    the mechanism is done."""
    while not client.is_done():
        client.receive(exchange.step(client.auth_bytes()))


def run_aiokafka(authenticator: Any, exchange: SaslServerExchange) -> None:
    """aiokafka's authenticators are generators of (token, expects an answer)."""
    steps = authenticator._authenticator
    token, _ = next(steps)
    while True:
        try:
            token, _ = steps.send(exchange.step(token))
        except StopIteration:
            return
