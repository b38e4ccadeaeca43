"""How a listener checks OAUTHBEARER tokens, as its settings choose: signed JWTs against a
JWKS, or (only when named) Kafka's validator of unsecured tokens."""

from __future__ import annotations

import base64
import json
import time

import pytest

from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.definitions import OAUTHBEARER_UNSECURED_VALIDATOR_HANDLER, ConfigError
from odradek.broker.security.jwt_validator import InvalidToken
from odradek.broker.server.listener_security import ListenerSecurity, listener_security

DEV = "listener.name.dev."


def dev_listener(**settings: str) -> ListenerSecurity:
    config = BrokerConfig.load(
        environ={},
        overrides={
            "listeners": "PLAINTEXT://127.0.0.1:9092,DEV://127.0.0.1:9093",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,DEV:SASL_PLAINTEXT",
            f"{DEV}sasl.enabled.mechanisms": "OAUTHBEARER",
            **settings,
        },
    )
    return listener_security(config, config.listeners[1], lambda *_: None, b"secret")


def unsecured_token(claims: dict[str, object]) -> str:
    def section(value: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{section({'alg': 'none'})}.{section(claims)}."


UNSECURED = {
    f"{DEV}oauthbearer.sasl.server.callback.handler.class": OAUTHBEARER_UNSECURED_VALIDATOR_HANDLER
}


def test_without_a_jwks_or_the_unsecured_validator_the_listener_is_refused() -> None:
    with pytest.raises(ConfigError, match="listener DEV offers OAUTHBEARER and needs the JWKS"):
        dev_listener()


def test_the_unsecured_validator_takes_tokens_without_a_signature(
    caplog: pytest.LogCaptureFixture,
) -> None:
    security = dev_listener(**UNSECURED)
    assert "accepts unsecured OAUTHBEARER tokens" in caplog.text
    assert security.sasl is not None and security.sasl.oauthbearer is not None
    validate = security.sasl.oauthbearer
    assert (
        validate(unsecured_token({"sub": "dev", "exp": time.time() + 60})).principal_name == "dev"
    )
    with pytest.raises(InvalidToken, match="expired"):
        validate(unsecured_token({"sub": "dev", "exp": time.time() - 1}))


def test_the_unsecured_validator_takes_its_options_from_the_jaas_login() -> None:
    jaas = (
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required"
        ' unsecuredValidatorPrincipalClaimName="client_id";'
    )
    security = dev_listener(**UNSECURED, **{f"{DEV}oauthbearer.sasl.jaas.config": jaas})
    assert security.sasl is not None and security.sasl.oauthbearer is not None
    token = unsecured_token({"client_id": "svc", "exp": time.time() + 60})
    assert security.sasl.oauthbearer(token).principal_name == "svc"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {f"{DEV}sasl.oauthbearer.jwks.endpoint.url": "file:///keys.json"},
            "checks unsecured tokens",
        ),
        (
            {
                f"{DEV}oauthbearer.sasl.jaas.config": (
                    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
                    ' required unsecuredValidatorAllowableClockSkewMs="soon";'
                )
            },
            "oauthbearer[.]sasl[.]jaas[.]config: unsecuredValidatorAllowableClockSkewMs",
        ),
    ],
)
def test_unusable_unsecured_settings_are_refused_naming_the_key(
    settings: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        dev_listener(**UNSECURED, **settings)
