"""The keys OAUTHBEARER tokens are verified with: a JWKS document (RFC 7517) read from
``sasl.oauthbearer.jwks.endpoint.url`` (``file:``, ``http:`` or ``https:``), kept and
fetched again every ``sasl.oauthbearer.jwks.endpoint.refresh.ms``, and at once when a token
names a key id the set lacks (an identity provider rotating its keys), at most once a
minute per key id, as Kafka's ``RefreshingHttpsJwks`` limits it.

Kafka refreshes in the background and fails the token that named the unknown key; here
the fetch happens on the validating thread so that token can succeed. A URL endpoint can
therefore block a validation for up to the fetch timeout: the connection should validate
OAUTHBEARER tokens off its event loop, and may call ``refresh`` from a background task so
the scheduled refreshes never fall on a client.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.request
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jwt

log = logging.getLogger(__name__)

DEFAULT_REFRESH_MS = 3_600_000  # sasl.oauthbearer.jwks.endpoint.refresh.ms
RETRY_AFTER_FAILURE_MS = 10_000  # sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms
MISSING_KEY_ID_RETRY_MS = 60_000
MISSING_KEY_ID_MAX_LENGTH = 1000
MISSING_KEY_ID_CACHE_SIZE = 16
FETCH_TIMEOUT_S = 10.0

_RSA_ALGORITHMS = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"})
_EC_ALGORITHMS = {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512", "secp256k1": "ES256K"}
_OKP_CURVES = frozenset({"Ed25519", "Ed448"})


class JwksError(Exception):
    """The JWKS could not be fetched or read."""


@dataclass(frozen=True)
class VerificationKey:
    kid: str | None
    algorithms: frozenset[str]
    """The JWS algorithms this key verifies: the JWK's ``alg`` if it names one, else every
    asymmetric algorithm of its type (never ``none``, never an HMAC)."""
    key: Any = field(repr=False)
    """The public key object PyJWT verifies with."""


def parse_jwks(document: bytes | str) -> tuple[VerificationKey, ...]:
    """The usable signature keys of a JWKS; keys of other types, for encryption, or with
    private parts are skipped (and logged by key id)."""
    try:
        keys = json.loads(document).get("keys")
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        raise JwksError("the JWKS is not a JSON object") from None
    if not isinstance(keys, list):
        raise JwksError("the JWKS has no 'keys' list")
    usable = []
    for jwk in keys:
        key = _verification_key(jwk) if isinstance(jwk, dict) else None
        if key is None:
            kid = jwk.get("kid") if isinstance(jwk, dict) else None
            log.warning("skipping a JWKS entry unusable for token signatures (kid %r)", kid)
        else:
            usable.append(key)
    return tuple(usable)


def _verification_key(jwk: dict[str, Any]) -> VerificationKey | None:
    if jwk.get("use", "sig") != "sig" or "d" in jwk:
        return None
    kty, kid, alg = jwk.get("kty"), jwk.get("kid"), jwk.get("alg")
    if kty == "RSA":
        family = _RSA_ALGORITHMS
    elif kty == "EC" and jwk.get("crv") in _EC_ALGORITHMS:
        family = frozenset({_EC_ALGORITHMS[jwk["crv"]]})
    elif kty == "OKP" and jwk.get("crv") in _OKP_CURVES:
        family = frozenset({"EdDSA"})
    else:
        return None
    algorithms = family if alg is None else family & {alg}
    if not algorithms or not (kid is None or isinstance(kid, str)):
        return None
    try:
        public_key = jwt.PyJWK(jwk, algorithm=min(algorithms)).key
    except jwt.PyJWTError:
        return None
    return VerificationKey(kid=kid, algorithms=algorithms, key=public_key)


def jwks_fetcher(url: str, *, timeout_s: float = FETCH_TIMEOUT_S) -> Callable[[], bytes]:
    """Reads the JWKS at a ``file:``, ``http:`` or ``https:`` URL each time it is called."""
    scheme = url.partition(":")[0].lower()
    if scheme not in ("file", "http", "https"):
        raise ValueError(
            f"sasl.oauthbearer.jwks.endpoint.url must be a file, http or https URL: {url}"
        )

    def fetch() -> bytes:
        try:
            with urllib.request.urlopen(url, timeout=timeout_s) as response:
                body: bytes = response.read()
                return body
        except (OSError, ValueError) as error:
            raise JwksError(f"could not read the JWKS at {url}: {error}") from None

    return fetch


class JwksKeyResolver:
    """The current key set of one JWKS endpoint, refreshed as the module says.
    Thread-safe: validations may run on several threads."""

    def __init__(
        self,
        fetch: Callable[[], bytes],
        *,
        refresh_ms: int = DEFAULT_REFRESH_MS,
        clock: Callable[[], float] = time.monotonic,  # refresh intervals are durations
    ) -> None:
        if refresh_ms <= 0:
            raise ValueError("sasl.oauthbearer.jwks.endpoint.refresh.ms must be positive")
        self._fetch = fetch
        self._refresh_ms = refresh_ms
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: tuple[VerificationKey, ...] = ()
        self._next_refresh_ms = 0.0
        self._missing_key_ids: OrderedDict[str, float] = OrderedDict()

    def refresh(self) -> None:
        """Fetch the set now; raises JwksError (and keeps the old keys) when that fails."""
        with self._lock:
            self._refresh(self._now_ms())

    def key_for(self, kid: str | None, algorithm: str) -> VerificationKey | None:
        """The key that verifies a token with this ``kid`` header (or without one, the
        only key for its algorithm), or None."""
        with self._lock:
            now = self._now_ms()
            if now >= self._next_refresh_ms:
                self._refresh_logging_failure(now)
            key = self._find(kid, algorithm)
            if key is None and kid is not None and self._may_look_for(kid, now):
                self._refresh_logging_failure(now)
                key = self._find(kid, algorithm)
            return key

    def _find(self, kid: str | None, algorithm: str) -> VerificationKey | None:
        usable = [key for key in self._keys if algorithm in key.algorithms]
        if kid is not None:
            return next((key for key in usable if key.kid == kid), None)
        return usable[0] if len(usable) == 1 else None

    def _may_look_for(self, kid: str, now: float) -> bool:
        """Whether a missing key id may trigger a fetch: not too long (a malformed
        token), not looked for within the last minute."""
        if len(kid) > MISSING_KEY_ID_MAX_LENGTH:
            return False
        if self._missing_key_ids.get(kid, 0.0) > now:
            return False
        self._missing_key_ids[kid] = now + MISSING_KEY_ID_RETRY_MS
        self._missing_key_ids.move_to_end(kid)
        while len(self._missing_key_ids) > MISSING_KEY_ID_CACHE_SIZE:
            self._missing_key_ids.popitem(last=False)
        return True

    def _refresh_logging_failure(self, now: float) -> None:
        try:
            self._refresh(now)
        except JwksError as error:
            log.warning("%s; keeping the %d keys known", error, len(self._keys))

    def _refresh(self, now: float) -> None:
        self._next_refresh_ms = now + RETRY_AFTER_FAILURE_MS
        keys = parse_jwks(self._fetch())
        self._keys = keys
        self._next_refresh_ms = now + self._refresh_ms
        for key in keys:
            if key.kid is not None:
                self._missing_key_ids.pop(key.kid, None)

    def _now_ms(self) -> float:
        return self._clock() * 1000.0
