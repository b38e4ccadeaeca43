"""Real keys, JWKS documents and signed JWTs for the OAUTHBEARER tests, made with
cryptography and PyJWT as an identity provider would make them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

NOW = 1_700_000_000.0
ISSUER = "https://idp.example.com/realms/kafka"

RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
ROTATED_RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
RSA_PUBLIC_PEM = RSA_KEY.public_key().public_bytes(
    serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
)


def public_jwk(key: Any, kid: str | None, **members: Any) -> dict[str, Any]:
    algorithm = ECAlgorithm if isinstance(key, ec.EllipticCurvePrivateKey) else RSAAlgorithm
    jwk: dict[str, Any] = json.loads(algorithm.to_jwk(key.public_key()))
    if kid is not None:
        jwk["kid"] = kid
    jwk.update(members)
    return jwk


def jwks(*keys: Mapping[str, Any]) -> bytes:
    return json.dumps({"keys": list(keys)}).encode()


def claims(**changes: Any) -> dict[str, Any]:
    """A token for alice issued a minute ago, valid for an hour."""
    values: dict[str, Any] = {
        "sub": "alice",
        "iss": ISSUER,
        "iat": NOW - 60,
        "exp": NOW + 3600,
        "scope": "kafka.read kafka.write",
    }
    values.update(changes)
    return {name: value for name, value in values.items() if value is not None}


def signed(
    payload: Mapping[str, Any],
    key: Any = RSA_KEY,
    *,
    kid: str | None = "key-1",
    algorithm: str = "RS256",
) -> str:
    headers = {"kid": kid} if kid is not None else {}
    return jwt.encode(dict(payload), key, algorithm=algorithm, headers=headers)
