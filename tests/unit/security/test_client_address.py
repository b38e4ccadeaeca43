"""Client addresses are written as Java's ``InetAddress.getHostAddress()`` writes them,
which is what the host of a Kafka ACL is compared with."""

from __future__ import annotations

import pytest

from odradek.broker.security.client_address import acl_host


@pytest.mark.parametrize(
    ("address", "host"),
    [
        ("192.168.1.1", "192.168.1.1"),
        ("::ffff:10.0.0.7", "10.0.0.7"),
        ("::1", "0:0:0:0:0:0:0:1"),
        ("2001:db8::ff00:42:8329", "2001:db8:0:0:0:ff00:42:8329"),
        ("2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8:0:0:0:0:0:1"),
        ("fe80::1%eth0", "fe80:0:0:0:0:0:0:1%eth0"),
    ],
)
def test_acl_host(address: str, host: str) -> None:
    assert acl_host(address) == host
