"""A client's address as the ``host`` of Kafka's ACLs names it.

Kafka compares an ACL's host with ``InetAddress.getHostAddress()`` of the connection, so an
operator writes hosts as Java prints them: IPv4 in dotted decimal (also for a client that
reached an IPv6 socket through an IPv4-mapped address, which Java turns into IPv4), IPv6 as
eight lower-case hex groups without leading zeros and without ``::`` shortening
(``0:0:0:0:0:0:0:1``), with the ``%scope`` suffix kept.
"""

from __future__ import annotations

import ipaddress


def acl_host(address: str) -> str:
    """``address`` as Python's sockets give it (``getpeername()[0]``)."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv4Address):
        return str(ip)
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    groups = ip.packed
    text = ":".join(f"{int.from_bytes(groups[at : at + 2], 'big'):x}" for at in range(0, 16, 2))
    return f"{text}%{ip.scope_id}" if ip.scope_id else text
