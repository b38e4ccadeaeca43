"""What each listener demands of a connection, built from the configuration at start-up:
TLS (its reloading server context and the client-certificate principal mapping) and SASL
(the mechanisms it offers, each with what it checks credentials against)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.definitions import (
    OAUTHBEARER_UNSECURED_VALIDATOR_HANDLER,
    ConfigError,
)
from odradek.broker.config.listeners import Listener
from odradek.broker.security.jaas_config import JaasConfigError, parse_jaas_config
from odradek.broker.security.jwks_keys import JwksError, JwksKeyResolver, jwks_fetcher
from odradek.broker.security.jwt_validator import JwtValidationConfig, JwtValidator
from odradek.broker.security.plain_users import PlainUsers, PlainUsersError
from odradek.broker.security.principal_mapping import PrincipalMapper
from odradek.broker.security.sasl_oauthbearer import TokenValidator
from odradek.broker.security.sasl_plain import PasswordVerifier
from odradek.broker.security.sasl_scram import ScramCredentialLookup
from odradek.broker.security.sasl_server_factory import SCRAM_MECHANISMS, SaslServerMechanisms
from odradek.broker.security.scram_passwords import ScramPasswords
from odradek.broker.security.tls_context import (
    ReloadingServerContext,
    TlsConfigError,
    TlsSettings,
)
from odradek.broker.security.unsecured_jws import (
    UnsecuredJwsValidator,
    UnsecuredValidatorConfig,
    UnsecuredValidatorConfigError,
)

_log = logging.getLogger(__name__)
SUPPORTED_MECHANISMS = ("PLAIN", *SCRAM_MECHANISMS, "OAUTHBEARER")


@dataclass(frozen=True)
class ListenerSecurity:
    listener: Listener
    tls: ReloadingServerContext | None = None
    principal_mapper: PrincipalMapper | None = None
    sasl: SaslServerMechanisms | None = None
    max_reauth_ms: int = 0
    max_sasl_token_bytes: int = 524_288


def listener_security(
    config: BrokerConfig,
    listener: Listener,
    scram: ScramCredentialLookup,
    unknown_user_secret: bytes,
) -> ListenerSecurity:
    """ConfigError, naming the key, for settings a listener cannot work with."""
    protocol = listener.security_protocol
    tls = mapper = None
    if protocol.uses_tls:
        settings = TlsSettings.from_config(lambda key: config.listener_str(listener, key))
        try:
            tls = ReloadingServerContext(settings)
            rules = config.listener_str(listener, "ssl.principal.mapping.rules") or "DEFAULT"
            mapper = PrincipalMapper.from_rules(rules)
        except (TlsConfigError, OSError) as error:
            raise ConfigError(f"listener {listener.name}: {error}") from None
    sasl = (
        _sasl_mechanisms(config, listener, scram, unknown_user_secret)
        if protocol.uses_sasl
        else None
    )
    return ListenerSecurity(
        listener,
        tls,
        mapper,
        sasl,
        int(str(config.listener_value(listener, "connections.max.reauth.ms"))),
        int(str(config.listener_value(listener, "sasl.server.max.receive.size"))),
    )


def _sasl_mechanisms(
    config: BrokerConfig, listener: Listener, scram: ScramCredentialLookup, secret: bytes
) -> SaslServerMechanisms:
    enabled = config.listener_value(listener, "sasl.enabled.mechanisms")
    assert isinstance(enabled, list)
    unsupported = [name for name in enabled if name not in SUPPORTED_MECHANISMS]
    if unsupported or not enabled:
        raise ConfigError(
            f"sasl.enabled.mechanisms: listener {listener.name} offers"
            f" {', '.join(unsupported) or 'nothing'}; Odradek supports"
            f" {', '.join(SUPPORTED_MECHANISMS)} (GSSAPI, Kafka's default, is not one of them)"
        )
    return SaslServerMechanisms(
        plain=_plain_users(config, listener, scram) if "PLAIN" in enabled else None,
        scram=scram,
        scram_mechanisms=tuple(name for name in SCRAM_MECHANISMS if name in enabled),
        oauthbearer=_token_validator(config, listener) if "OAUTHBEARER" in enabled else None,
        unknown_user_secret=secret,
    )


def _plain_users(
    config: BrokerConfig, listener: Listener, scram: ScramCredentialLookup
) -> PasswordVerifier:
    """PLAIN's users: the user_<name> options of the listener's PlainLoginModule JAAS login
    (``listener.name.<l>.plain.sasl.jaas.config``, else ``sasl.jaas.config``),
    ``sasl.plain.users.file``, and with ``sasl.plain.check.scram.credentials`` every user
    with a SCRAM credential."""
    key = f"{listener.config_prefix}plain.sasl.jaas.config"
    jaas = config.mechanism_str(listener, "PLAIN", "sasl.jaas.config")
    users_file = config.listener_str(listener, "sasl.plain.users.file")
    sources: list[PasswordVerifier] = []
    try:
        if jaas and (users := PlainUsers.from_jaas(parse_jaas_config(jaas))):
            sources.append(users.verify)
        if users_file and (users := PlainUsers.from_file(Path(users_file))):
            sources.append(users.verify)
    except (JaasConfigError, PlainUsersError, OSError) as error:
        raise ConfigError(f"listener {listener.name}, PLAIN users: {error}") from None
    if config.listener_value(listener, "sasl.plain.check.scram.credentials"):
        sources.append(ScramPasswords(scram).verify)
    if not sources:
        raise ConfigError(
            f"{key}: listener {listener.name} offers PLAIN but names no user (give"
            ' PlainLoginModule user_<name>="<password>" options, sasl.plain.users.file or'
            " sasl.plain.check.scram.credentials=true)"
        )

    def verify(user: str, password: str) -> bool:
        return any([check(user, password) for check in sources])  # each one, always

    return verify


def _token_validator(config: BrokerConfig, listener: Listener) -> TokenValidator:
    def get(key: str) -> str | None:
        return config.listener_str(listener, key)

    url = get("sasl.oauthbearer.jwks.endpoint.url")
    handler = config.mechanism_str(listener, "OAUTHBEARER", "sasl.server.callback.handler.class")
    if handler == OAUTHBEARER_UNSECURED_VALIDATOR_HANDLER:
        if url:
            raise ConfigError(
                f"sasl.oauthbearer.jwks.endpoint.url: listener {listener.name} checks"
                " unsecured tokens (sasl.server.callback.handler.class), which have no keys"
            )
        return _unsecured_validator(config, listener)
    if not url:
        raise ConfigError(
            f"sasl.oauthbearer.jwks.endpoint.url: listener {listener.name} offers OAUTHBEARER"
            " and needs the JWKS its tokens are signed with"
        )
    resolver = JwksKeyResolver(
        jwks_fetcher(url), refresh_ms=int(get("sasl.oauthbearer.jwks.endpoint.refresh.ms") or 0)
    )
    try:
        resolver.refresh()
    except JwksError as error:
        raise ConfigError(f"sasl.oauthbearer.jwks.endpoint.url: {error}") from None
    audience = get("sasl.oauthbearer.expected.audience") or ""
    checks = JwtValidationConfig(
        expected_audience=tuple(a.strip() for a in audience.split(",") if a.strip()),
        expected_issuer=get("sasl.oauthbearer.expected.issuer"),
        clock_skew_s=int(get("sasl.oauthbearer.clock.skew.seconds") or 30),
        sub_claim_name=get("sasl.oauthbearer.sub.claim.name") or "sub",
        scope_claim_name=get("sasl.oauthbearer.scope.claim.name") or "scope",
    )
    return JwtValidator(resolver, checks).validate


def _unsecured_validator(config: BrokerConfig, listener: Listener) -> TokenValidator:
    """Kafka's validator of unsecured tokens, with the ``unsecuredValidator*`` options of the
    listener's OAUTHBEARER JAAS login."""
    jaas = config.mechanism_str(listener, "OAUTHBEARER", "sasl.jaas.config")
    try:
        options = parse_jaas_config(jaas)[0].options if jaas else {}
        checks = UnsecuredValidatorConfig.from_options(options)
    except (JaasConfigError, UnsecuredValidatorConfigError) as error:
        raise ConfigError(
            f"{listener.config_prefix}oauthbearer.sasl.jaas.config: {error}"
        ) from None
    _log.warning(
        "listener %s accepts unsecured OAUTHBEARER tokens, which anyone can make: for"
        " development only",
        listener.name,
    )
    return UnsecuredJwsValidator(checks).validate
