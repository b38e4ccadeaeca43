"""TLS contexts from Kafka's ssl.* settings, judged by real handshakes over loopback:
PEM, inline PEM and PKCS12 key stores, client authentication, TLS 1.2+ only, and
certificates replaced on disk picked up by new connections while old ones go on."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from certificates import Issued, certificate_authority, issue

from odradek.broker.security.tls_context import (
    ReloadingServerContext,
    TlsConfigError,
    TlsSettings,
    server_context,
)

Handshake = Callable[[ssl.SSLContext], Awaitable[tuple[str, dict[str, object] | None]]]


def client(ca: Issued, mine: Issued | None = None, tmp: Path | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cadata=ca.cert_pem.decode())
    if mine is not None:
        assert tmp is not None
        context.load_cert_chain(mine.write_pem(tmp / "client.pem"))
    return context


def serve(server: ssl.SSLContext, scenario: Callable[[Handshake], Awaitable[None]]) -> None:
    """Run ``scenario`` against an echo server on loopback; each handshake returns the
    server's common name and the client certificate the server saw."""
    peers: list[dict[str, object] | None] = []

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peers.append(writer.get_extra_info("peercert"))
        while data := await reader.read(100):
            writer.write(data)
            await writer.drain()
        writer.close()

    async def main() -> None:
        listening = await asyncio.start_server(echo, "127.0.0.1", 0, ssl=server)
        port = listening.sockets[0].getsockname()[1]

        async def handshake(context: ssl.SSLContext) -> tuple[str, dict[str, object] | None]:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
            writer.write(b"ping")
            assert await reader.readexactly(4) == b"ping"
            presented = writer.get_extra_info("peercert")
            writer.close()
            subject = dict(item[0] for item in presented["subject"])
            return subject["commonName"], peers[-1]

        try:
            await asyncio.wait_for(scenario(handshake), 20)
        finally:
            listening.close()

    asyncio.run(main())


def test_a_pem_key_store_file_serves_its_certificate(tmp_path: Path) -> None:
    ca = certificate_authority()
    settings = TlsSettings(
        keystore_location=str(issue(ca, "broker-0").write_pem(tmp_path / "k.pem"))
    )

    async def scenario(handshake: Handshake) -> None:
        assert (await handshake(client(ca)))[0] == "broker-0"

    serve(server_context(settings), scenario)


def test_inline_pem_and_pkcs12_key_stores_serve_too(tmp_path: Path) -> None:
    ca = certificate_authority()
    inline = issue(ca, "inline")
    stored = issue(ca, "pkcs12").write_pkcs12(tmp_path / "k.p12", "s3cret")
    contexts = [
        server_context(
            TlsSettings(
                keystore_certificate_chain=inline.cert_pem.decode(),
                keystore_key=inline.key_pem.decode(),
            )
        ),
        server_context(
            TlsSettings(
                keystore_type="PKCS12", keystore_location=str(stored), keystore_password="s3cret"
            )
        ),
    ]
    for context, expected in zip(contexts, ("inline", "pkcs12"), strict=True):

        async def scenario(handshake: Handshake, expected: str = expected) -> None:
            assert (await handshake(client(ca)))[0] == expected

        serve(context, scenario)


def test_required_client_auth_refuses_a_client_without_a_trusted_certificate(
    tmp_path: Path,
) -> None:
    ca, stranger_ca = certificate_authority(), certificate_authority("stranger")
    settings = TlsSettings(
        keystore_location=str(issue(ca, "broker").write_pem(tmp_path / "k.pem")),
        truststore_certificates=ca.cert_pem.decode(),
        client_auth="required",
    )

    async def scenario(handshake: Handshake) -> None:
        _, peer = await handshake(client(ca, issue(ca, "alice"), tmp_path))
        assert peer is not None
        assert dict(item[0] for item in peer["subject"])["commonName"] == "alice"  # type: ignore[index, union-attr]
        for unwelcome in (client(ca), client(ca, issue(stranger_ca, "mallory"), tmp_path)):
            with pytest.raises((ssl.SSLError, ConnectionError, asyncio.IncompleteReadError)):
                await handshake(unwelcome)

    serve(server_context(settings), scenario)


def test_a_replaced_certificate_serves_new_connections_while_old_ones_go_on(
    tmp_path: Path,
) -> None:
    ca = certificate_authority()
    key_store = issue(ca, "before").write_pem(tmp_path / "k.pem")
    reloading = ReloadingServerContext(TlsSettings(keystore_location=str(key_store)))

    async def scenario(handshake: Handshake) -> None:
        assert (await handshake(client(ca)))[0] == "before"
        assert not reloading.reload()  # nothing changed
        (tmp_path / "k.pem.new").write_bytes(b"half a certificate")
        (tmp_path / "k.pem.new").replace(key_store)
        assert not reloading.reload()  # unusable: the old one stays
        assert (await handshake(client(ca)))[0] == "before"
        issue(ca, "after").write_pem(tmp_path / "k.pem.new").replace(key_store)
        assert reloading.reload()
        assert (await handshake(client(ca)))[0] == "after"

    serve(reloading.context, scenario)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (TlsSettings(keystore_type="JKS", keystore_location="x"), "ssl.keystore.type: JKS"),
        (TlsSettings(enabled_protocols=("TLSv1.1",)), "ssl.enabled.protocols: TLSv1.1"),
        (TlsSettings(), "ssl.keystore.location: a TLS listener needs a key store"),
        (TlsSettings(keystore_location="/nonexistent.pem"), "No such file"),
        (TlsSettings(keystore_location="x", client_auth="always"), "ssl.client.auth"),
    ],
)
def test_unusable_settings_are_refused_naming_the_key(settings: TlsSettings, message: str) -> None:
    with pytest.raises(TlsConfigError, match=message):
        server_context(settings)


def test_passwords_stay_out_of_the_settings_repr() -> None:
    settings = TlsSettings(
        keystore_location="k.p12", keystore_password="hunter2", key_password="x1"
    )
    assert "hunter2" not in repr(settings) and "x1" not in repr(settings)


def test_a_replaced_trust_store_decides_which_clients_get_in(tmp_path: Path) -> None:
    ca, next_ca = certificate_authority(), certificate_authority("next")
    trust = tmp_path / "trust.pem"
    trust.write_bytes(ca.cert_pem)
    reloading = ReloadingServerContext(
        TlsSettings(
            keystore_location=str(issue(ca, "broker").write_pem(tmp_path / "k.pem")),
            truststore_location=str(trust),
            client_auth="required",
        )
    )
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    old_client = client(ca, issue(ca, "old"), tmp_path / "old")
    new_client = client(ca, issue(next_ca, "new"), tmp_path / "new")

    async def scenario(handshake: Handshake) -> None:
        await handshake(old_client)
        with pytest.raises((ssl.SSLError, ConnectionError, asyncio.IncompleteReadError)):
            await handshake(new_client)
        (tmp_path / "trust.new").write_bytes(next_ca.cert_pem)
        (tmp_path / "trust.new").replace(trust)
        assert reloading.reload()
        await handshake(new_client)
        with pytest.raises((ssl.SSLError, ConnectionError, asyncio.IncompleteReadError)):
            await handshake(old_client)

    serve(reloading.context, scenario)
