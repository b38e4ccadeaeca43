from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from oauth_tokens import EC_KEY, NOW, ROTATED_RSA_KEY, RSA_KEY, claims, jwks, public_jwk, signed

from odradek.broker.security.jwks_keys import (
    JwksError,
    JwksKeyResolver,
    jwks_fetcher,
    parse_jwks,
)
from odradek.broker.security.jwt_validator import JwtValidator

FIRST = jwks(public_jwk(RSA_KEY, "key-1"))
ROTATED = jwks(public_jwk(RSA_KEY, "key-1"), public_jwk(ROTATED_RSA_KEY, "key-2"))


class Endpoint:
    """A JWKS endpoint whose document can change, counting the fetches."""

    def __init__(self, document: bytes) -> None:
        self.document: bytes | None = document
        self.fetches = 0
        self.now = NOW

    def fetch(self) -> bytes:
        self.fetches += 1
        if self.document is None:
            raise JwksError("the identity provider is down")
        return self.document

    def resolver(self, **options: Any) -> JwksKeyResolver:
        return JwksKeyResolver(self.fetch, clock=lambda: self.now, **options)


def test_a_token_naming_a_rotated_in_key_fetches_the_jwks_again_and_validates() -> None:
    endpoint = Endpoint(FIRST)
    validator = JwtValidator(endpoint.resolver(), clock=lambda: endpoint.now)
    assert validator.validate(signed(claims())).principal_name == "alice"
    assert endpoint.fetches == 1
    endpoint.document = ROTATED
    token = signed(claims(sub="bob"), ROTATED_RSA_KEY, kid="key-2")
    assert validator.validate(token).principal_name == "bob"
    assert endpoint.fetches == 2
    validator.validate(token)
    assert endpoint.fetches == 2


def test_an_unknown_kid_fetches_at_most_once_a_minute() -> None:
    endpoint = Endpoint(FIRST)
    resolver = endpoint.resolver()
    for _ in range(3):
        assert resolver.key_for("key-9", "RS256") is None
    assert endpoint.fetches == 2
    endpoint.now += 61
    assert resolver.key_for("key-9", "RS256") is None
    assert endpoint.fetches == 3
    assert resolver.key_for("k" * 1001, "RS256") is None
    assert endpoint.fetches == 3


def test_the_set_is_fetched_again_after_the_refresh_interval() -> None:
    endpoint = Endpoint(FIRST)
    resolver = endpoint.resolver(refresh_ms=60_000)
    resolver.key_for("key-1", "RS256")
    endpoint.now += 59
    resolver.key_for("key-1", "RS256")
    assert endpoint.fetches == 1
    endpoint.now += 1
    resolver.key_for("key-1", "RS256")
    assert endpoint.fetches == 2


def test_a_failed_fetch_keeps_the_known_keys_and_is_retried_after_ten_seconds() -> None:
    endpoint = Endpoint(FIRST)
    resolver = endpoint.resolver(refresh_ms=60_000)
    resolver.refresh()
    endpoint.document = None
    with pytest.raises(JwksError, match="down"):
        resolver.refresh()
    endpoint.now += 60
    assert resolver.key_for("key-1", "RS256") is not None
    endpoint.now += 9
    resolver.key_for("key-1", "RS256")
    assert endpoint.fetches == 3
    endpoint.now += 1
    resolver.key_for("key-1", "RS256")
    assert endpoint.fetches == 4


def test_only_public_signature_keys_of_known_types_are_kept() -> None:
    private = public_jwk(RSA_KEY, "private", d="AQAB")
    keys = parse_jwks(
        jwks(
            public_jwk(RSA_KEY, "sig", use="sig"),
            public_jwk(RSA_KEY, "enc", use="enc"),
            private,
            public_jwk(EC_KEY, "ec"),
            public_jwk(EC_KEY, "bad-curve", crv="P-192"),
            public_jwk(RSA_KEY, "hs", alg="HS256"),
            {"kty": "oct", "kid": "secret", "k": "c2VjcmV0"},
            {"kty": "RSA", "kid": "broken", "n": "!!", "e": "AQAB"},
            {"kid": "no-type"},
            "not an object",
        )
    )
    assert [(key.kid, sorted(key.algorithms)) for key in keys] == [
        ("sig", ["PS256", "PS384", "PS512", "RS256", "RS384", "RS512"]),
        ("ec", ["ES256"]),
    ]
    assert "n=" not in repr(keys[0])


@pytest.mark.parametrize("document", [b"", b"[]", b"{}", b'{"keys": {}}', b"\xff"])
def test_a_document_that_is_not_a_jwks_is_an_error(document: bytes) -> None:
    with pytest.raises(JwksError):
        parse_jwks(document)


def test_the_refresh_interval_must_be_positive() -> None:
    with pytest.raises(ValueError, match=r"refresh\.ms"):
        JwksKeyResolver(lambda: FIRST, refresh_ms=0)


def test_a_file_url_is_read_at_each_fetch(tmp_path: Path) -> None:
    path = tmp_path / "jwks.json"
    path.write_bytes(FIRST)
    fetch = jwks_fetcher(path.as_uri())
    assert fetch() == FIRST
    path.write_bytes(ROTATED)
    assert fetch() == ROTATED
    with pytest.raises(JwksError, match="could not read the JWKS"):
        jwks_fetcher((tmp_path / "missing.json").as_uri())()


@pytest.fixture
def jwks_server() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != "/jwks":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(ROTATED)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_an_http_endpoint_is_fetched(jwks_server: str) -> None:
    resolver = JwksKeyResolver(jwks_fetcher(f"{jwks_server}/jwks", timeout_s=5))
    assert resolver.key_for("key-2", "RS256") is not None
    with pytest.raises(JwksError, match="404"):
        jwks_fetcher(f"{jwks_server}/missing", timeout_s=5)()


def test_only_file_http_and_https_urls_are_accepted() -> None:
    with pytest.raises(ValueError, match="file, http or https"):
        jwks_fetcher("ftp://idp.example.com/jwks")
