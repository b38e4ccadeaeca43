"""The SASL mechanisms a listener offers, each with what it authenticates against, and a
new server exchange for the mechanism a client picked (SaslHandshake's ``mechanism``)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.security.sasl_mechanism import SaslServerExchange
from odradek.broker.security.sasl_oauthbearer import OAuthBearerServerExchange, TokenValidator
from odradek.broker.security.sasl_plain import PasswordVerifier, PlainServerExchange
from odradek.broker.security.sasl_scram import ScramCredentialLookup, ScramServerExchange
from odradek.broker.security.scram_credential import ScramMechanism

SCRAM_MECHANISMS = tuple(m.value for m in ScramMechanism)


class UnsupportedSaslMechanism(KafkaError):
    def __init__(self, mechanism: str) -> None:
        super().__init__(
            ErrorCode.unsupported_sasl_mechanism, f"Unsupported SASL mechanism {mechanism}"
        )


@dataclass(frozen=True)
class SaslServerMechanisms:
    """A mechanism is offered when what it checks against is given: PLAIN with a password
    verifier, the SCRAM mechanisms of ``scram_mechanisms`` with a credential lookup,
    OAUTHBEARER with a token validator. ``unknown_user_secret`` salts SCRAM's answers to
    unknown users; give every broker of a cluster the same one, or a client comparing
    brokers could tell real users (same salt everywhere) from unknown ones."""

    plain: PasswordVerifier | None = None
    scram: ScramCredentialLookup | None = None
    scram_mechanisms: tuple[str, ...] = SCRAM_MECHANISMS
    oauthbearer: TokenValidator | None = None
    unknown_user_secret: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)

    @property
    def names(self) -> tuple[str, ...]:
        """The mechanisms offered, for SaslHandshake's ``mechanisms``."""
        return (
            (("PLAIN",) if self.plain is not None else ())
            + (self.scram_mechanisms if self.scram is not None else ())
            + (("OAUTHBEARER",) if self.oauthbearer is not None else ())
        )

    def new_exchange(self, mechanism: str, *, reauthentication: bool = False) -> SaslServerExchange:
        """Raises UnsupportedSaslMechanism for a mechanism not offered."""
        if mechanism == "PLAIN" and self.plain is not None:
            return PlainServerExchange(self.plain, reauthentication=reauthentication)
        if mechanism in self.scram_mechanisms and self.scram is not None:
            return ScramServerExchange(
                ScramMechanism(mechanism),
                self.scram,
                unknown_user_secret=self.unknown_user_secret,
                reauthentication=reauthentication,
            )
        if mechanism == "OAUTHBEARER" and self.oauthbearer is not None:
            return OAuthBearerServerExchange(self.oauthbearer, reauthentication=reauthentication)
        raise UnsupportedSaslMechanism(mechanism)
