from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from odradek.broker.config.broker_config import BrokerConfig
from odradek.operator.builders.broker_config import broker_properties
from odradek.operator.models import ClusterSpec
from odradek.operator.pod_init import main, with_rack


def test_rack_is_appended_to_the_broker_properties() -> None:
    assert with_rack("a=1\n", "eu-west-1a") == "a=1\nbroker.rack=eu-west-1a\n"


def test_an_existing_rack_line_is_replaced() -> None:
    assert with_rack("broker.rack=old\na=1\n", "new") == "a=1\nbroker.rack=new\n"


def test_a_node_without_the_label_leaves_the_rack_unset() -> None:
    assert with_rack("a=1\n", None) == "a=1\n"


NODE = {"metadata": {"name": "n1", "labels": {"topology.kubernetes.io/zone": "eu-west-1b"}}}


class NodeApi(BaseHTTPRequestHandler):
    """Answers GET /api/v1/nodes/n1 for the pod's bearer token, like the API server."""

    def do_GET(self) -> None:
        authorized = self.headers.get("Authorization") == "Bearer pod-token"
        found = self.path == "/api/v1/nodes/n1"
        self.send_response(200 if authorized and found else 403 if not authorized else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps(NODE if authorized and found else {}).encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def api_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An HTTPS server on loopback with a self-signed certificate; yields the token dir."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    tokens = tmp_path / "serviceaccount"
    tokens.mkdir()
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(tmp_path / "key.pem"),
            "-out",
            str(tokens / "ca.crt"),
        ],
        check=True,
        capture_output=True,
    )
    (tokens / "token").write_text("pod-token\n")
    server = ThreadingHTTPServer(("127.0.0.1", 0), NodeApi)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tokens / "ca.crt", tmp_path / "key.pem")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(server.server_address[1]))
    yield tokens
    server.shutdown()
    server.server_close()


def test_init_step_writes_the_config_with_the_nodes_zone(api_server: Path, tmp_path: Path) -> None:
    (tmp_path / "in.properties").write_text("log.dirs=/var/lib/odradek/data\n")
    code = main(
        [
            "--node",
            "n1",
            "--topology-key",
            "topology.kubernetes.io/zone",
            "--config",
            str(tmp_path / "in.properties"),
            "--out",
            str(tmp_path / "out"),
            "--token-dir",
            str(api_server),
        ]
    )
    assert code == 0
    assert (tmp_path / "out").read_text() == (
        "log.dirs=/var/lib/odradek/data\nbroker.rack=eu-west-1b\n"
    )


def test_a_missing_label_is_reported_and_the_rack_left_unset(
    api_server: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "in.properties").write_text("a=1\n")
    main(
        [
            "--node",
            "n1",
            "--topology-key",
            "example.com/rack",
            "--config",
            str(tmp_path / "in.properties"),
            "--out",
            str(tmp_path / "out"),
            "--token-dir",
            str(api_server),
        ]
    )
    assert (tmp_path / "out").read_text() == "a=1\n"
    assert "node n1 has no label example.com/rack" in capsys.readouterr().out


def external_init_step(
    tmp_path: Path, name: str, kind: str, internal: str
) -> tuple[list[str], Path, Path]:
    """The init step's arguments for a Cluster with a PLAIN listener and an external one
    ``name`` of ``kind`` on node 10.1.2.3 (no --broker yet), the empty external-ports
    directory and the output file."""
    spec = ClusterSpec.model_validate(
        {
            "listeners": [
                {"name": "PLAIN", "port": 9092},
                {"name": name, "port": 9094, "external": {"type": kind}},
            ]
        }
    )
    config = tmp_path / "broker.properties"
    config.write_text(broker_properties("events", "prod", spec))
    ports = tmp_path / "ports"
    ports.mkdir()
    out = tmp_path / "runtime.properties"
    argv = ["--config", str(config), "--out", str(out), "--advertised", internal]
    argv += ["--host", "10.1.2.3", "--external-ports", str(ports), "--external", name]
    return argv, ports, out


def test_external_listeners_are_advertised_at_the_nodes_address_and_the_brokers_node_port(
    tmp_path: Path,
) -> None:
    """The init step's advertised.listeners, as the broker loads them: in-cluster ones as
    given, the external one at the node's address and broker 1's node port."""
    internal = "PLAIN://events-broker-1.events-brokers.prod.svc:9092"
    argv, ports, out = external_init_step(tmp_path, "EXTERNAL", "nodeport", internal)
    (ports / "EXTERNAL.1").write_text("31234")
    assert main([*argv, "--broker", "1"]) == 0
    loaded = BrokerConfig.load(out, environ={"ODRADEK_NODE_ID": "1"})
    assert [str(listener) for listener in loaded.advertised_listeners] == [
        internal,
        "EXTERNAL://10.1.2.3:31234",
    ]
    with pytest.raises(SystemExit, match="no external address for listener EXTERNAL of broker 2"):
        main([*argv, "--broker", "2"])


def test_a_load_balancer_address_is_advertised_as_it_is_once_the_operator_wrote_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The load balancer's host:port is advertised as given; a starting broker waits for
    it to appear in the mounted ConfigMap (here written a moment after it started)."""
    internal = "PLAIN://events-broker-0.events-brokers.prod.svc:9092"
    argv, ports, out = external_init_step(tmp_path, "PUBLIC", "loadbalancer", internal)
    writer = threading.Timer(1.5, (ports / "PUBLIC.0").write_text, ["198.18.0.7:9095"])
    writer.start()
    try:
        assert main([*argv, "--broker", "0", "--wait", "30"]) == 0
    finally:
        writer.join()
    assert "waiting for the external address of listener PUBLIC of broker 0" in (
        capsys.readouterr().out
    )
    loaded = BrokerConfig.load(out, environ={"ODRADEK_NODE_ID": "0"})
    assert [str(listener) for listener in loaded.advertised_listeners] == [
        internal,
        "PUBLIC://198.18.0.7:9095",
    ]
    started = time.monotonic()
    with pytest.raises(SystemExit, match="no external address for listener PUBLIC of broker 1"):
        main([*argv, "--broker", "1", "--wait", "1"])
    assert time.monotonic() - started >= 1
