"""Keys and certificates of a throwaway control plane, made with the openssl command line.

One CA signs the API server's serving certificate (for 127.0.0.1 and the addresses
given) and the client certificates of the admin and of kubelets (``node_client``); a
separate RSA key signs ServiceAccount tokens.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

DAYS = "2"


@dataclass(frozen=True)
class Pki:
    ca_cert: Path
    ca_key: Path
    serving_cert: Path
    serving_key: Path
    admin_cert: Path
    admin_key: Path
    service_account_key: Path


def _openssl(*args: str, stdin: bytes | None = None) -> bytes:
    result = subprocess.run(["openssl", *args], input=stdin, capture_output=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"openssl {args[0]}: {result.stderr.decode(errors='replace')}")
    return result.stdout


def _signed(
    directory: Path, name: str, subject: str, extensions: str, ca: tuple[Path, Path]
) -> None:
    """``<name>.key`` and ``<name>.crt`` signed by ``ca``, with ``extensions`` (x509v3 config)."""
    key, cert, ext = (directory / f"{name}.{suffix}" for suffix in ("key", "crt", "ext"))
    ext.write_text(extensions)
    request = _openssl(
        "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-subj", subject
    )
    _openssl(
        "x509",
        "-req",
        "-days",
        DAYS,
        "-CA",
        str(ca[0]),
        "-CAkey",
        str(ca[1]),
        "-CAcreateserial",
        "-extfile",
        str(ext),
        "-out",
        str(cert),
        stdin=request,
    )


CLIENT_EXTENSIONS = "extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n"


def make_pki(directory: Path, addresses: tuple[str, ...] = ()) -> Pki:
    """``addresses``: IPs the API server is also reached at (a host address, a Service IP)."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = (directory / "ca.crt", directory / "ca.key")
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        DAYS,
        "-subj",
        "/CN=odradek-e2e-ca",
        "-keyout",
        str(ca[1]),
        "-out",
        str(ca[0]),
    )
    names = ",".join(f"IP:{address}" for address in ("127.0.0.1", *addresses))
    _signed(
        directory,
        "apiserver",
        "/CN=kube-apiserver",
        "extendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n"
        f"subjectAltName={names},DNS:localhost,DNS:kubernetes.default.svc\n",
        ca,
    )
    _signed(directory, "admin", "/O=system:masters/CN=odradek-e2e-admin", CLIENT_EXTENSIONS, ca)
    _openssl("genrsa", "-out", str(directory / "service-account.key"), "2048")
    return Pki(
        ca_cert=ca[0],
        ca_key=ca[1],
        serving_cert=directory / "apiserver.crt",
        serving_key=directory / "apiserver.key",
        admin_cert=directory / "admin.crt",
        admin_key=directory / "admin.key",
        service_account_key=directory / "service-account.key",
    )


def node_client(pki: Pki, node: str) -> tuple[Path, Path]:
    """A kubelet's client certificate and key (system:node:<node>, group system:nodes)."""
    directory = pki.ca_cert.parent
    name = f"node-{node}"
    subject = f"/O=system:nodes/CN=system:node:{node}"
    _signed(directory, name, subject, CLIENT_EXTENSIONS, (pki.ca_cert, pki.ca_key))
    return directory / f"{name}.crt", directory / f"{name}.key"
