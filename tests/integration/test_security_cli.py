"""`odradek user` and `odradek acl` against a broker with SASL and the authorizer on: the
administrator (a super user logged in with PLAIN) gives alice SCRAM passwords and ACLs, and
alice's own clients show the effect: she logs in or not, may write a topic or not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerFactory, unique_name
from confluent_kafka import KafkaError, Producer
from kafka_tools import kafka_tool
from odradek_cli import odradek
from secured_broker import SecuredBroker, secured_broker

ADMIN = ("bob", "bob-secret")  # a PLAIN user, and super user


@pytest.fixture(scope="module")
def secured(
    module_broker_factory: BrokerFactory, tmp_path_factory: pytest.TempPathFactory
) -> SecuredBroker:
    return secured_broker(
        module_broker_factory,
        tmp_path_factory.mktemp("security-cli"),
        {
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": f"User:{ADMIN[0]}",
        },
    )


def as_admin(secured: SecuredBroker, *args: str, stdin: str | None = None, expect: int = 0) -> Any:
    user, password = ADMIN
    connection = ["--bootstrap-server", secured.sasl_plaintext_bootstrap(),
                  "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanism=PLAIN",
                  "-X", f"sasl.username={user}", "-X", f"sasl.password={password}"]  # fmt: skip
    return odradek(*args, *connection, stdin=stdin, expect=expect)


def alice(secured: SecuredBroker, mechanism: str, password: str = "alice-secret") -> dict[str, Any]:
    return {
        "bootstrap.servers": secured.sasl_plaintext_bootstrap(),
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism,
        "sasl.username": "alice",
        "sasl.password": password,
    }


def produce_one(settings: dict[str, Any], topic: str) -> KafkaError | None:
    """Produce a record; the error it failed with, or None. Authentication errors count."""
    failures: list[KafkaError] = []
    producer = Producer({**settings, "error_cb": failures.append, "message.timeout.ms": 8000})
    producer.produce(topic, b"x", on_delivery=lambda error, _: failures.append(error))
    producer.flush(15)
    errors = [e for e in failures if e is not None]
    return errors[0] if errors else None


def described_users(secured: SecuredBroker, *names: str) -> list[list[str]]:
    out = as_admin(secured, "user", "describe", *names).stdout
    return [line.split() for line in out.splitlines()[1:]]


def test_user_passwords_set_described_and_deleted(secured: SecuredBroker) -> None:
    set_512 = as_admin(secured, "user", "set-password", "alice", stdin="alice-secret\n")
    assert "Set the SCRAM-SHA-512 password of alice." in set_512.stderr
    as_admin(secured, "user", "set-password", "alice", "--mechanism", "SCRAM-SHA-256",
             "--iterations", "8192", stdin="alice-secret\n")  # fmt: skip
    assert described_users(secured, "alice") == [
        ["alice", "SCRAM-SHA-256", "8192"],
        ["alice", "SCRAM-SHA-512", "4096"],
    ]
    topic = unique_name("cli-login")
    logged_in = produce_one(alice(secured, "SCRAM-SHA-256"), topic)  # but may not write
    assert logged_in is not None and logged_in.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    wrong = produce_one(alice(secured, "SCRAM-SHA-512", "not-her-password"), topic)
    assert wrong is not None and wrong.code() == KafkaError._AUTHENTICATION

    deleted = as_admin(secured, "user", "delete", "alice", "--mechanism", "SCRAM-SHA-256")
    assert "Deleted SCRAM-SHA-256 of alice." in deleted.stderr
    assert described_users(secured, "alice") == [["alice", "SCRAM-SHA-512", "4096"]]
    gone = produce_one(alice(secured, "SCRAM-SHA-256"), topic)
    assert gone is not None and gone.code() == KafkaError._AUTHENTICATION
    as_admin(secured, "user", "delete", "alice")
    missing = as_admin(secured, "user", "describe", "alice", expect=1)
    assert "cannot describe users: attempt to describe a user credential that does not exist" in (
        missing.stderr.lower()
    )


def test_user_commands_refuse_bad_input_with_a_sentence(secured: SecuredBroker) -> None:
    too_few = as_admin(secured, "user", "set-password", "x", "--iterations", "100", expect=2)
    assert "expected an integer >= 4096" in too_few.stderr
    too_many = as_admin(secured, "user", "set-password", "x", "--iterations", "20000",
                        stdin="pw\n", expect=1)  # fmt: skip
    assert "--iterations: at most 16384" in too_many.stderr
    empty = as_admin(secured, "user", "set-password", "x", stdin="\n", expect=1)
    assert "the password is empty" in empty.stderr


def quota_rows(secured: SecuredBroker, *names: str) -> list[list[str]]:
    out = as_admin(secured, "user", "quotas", *names).stdout
    return [line.split() for line in out.splitlines()[1:]]


def kafka_configs(secured: SecuredBroker, workdir: Path, *arguments: str) -> str:
    """Kafka's kafka-configs, logged in as the administrator."""
    settings = workdir / "admin.properties"
    user, password = ADMIN
    settings.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="{user}" password="{password}";\n'
    )
    bootstrap = secured.sasl_plaintext_bootstrap()
    return kafka_tool(
        "kafka-configs", "--bootstrap-server", bootstrap, "--command-config", str(settings),
        *arguments,
    )  # fmt: skip


def test_user_quotas_set_listed_and_removed_as_kafka_configs_sees_them(
    secured: SecuredBroker, tmp_path: Path
) -> None:
    done = as_admin(secured, "user", "set-quota", "carol",
                    "producer_byte_rate=1048576", "consumer_byte_rate=2097152")  # fmt: skip
    assert "Set the quotas of user carol." in done.stderr
    as_admin(secured, "user", "set-quota", "carol", "request_percentage=12.5", "--client-id", "etl")
    as_admin(secured, "user", "set-quota", "<default>", "producer_byte_rate=4096")
    assert quota_rows(secured, "carol") == [
        ["carol", "consumer_byte_rate", "2097152"],  # no client id: an empty column
        ["carol", "producer_byte_rate", "1048576"],
        ["carol", "etl", "request_percentage", "12.5"],
    ]
    assert ["<default>", "producer_byte_rate", "4096"] in quota_rows(secured)
    users = ("--describe", "--entity-type", "users")
    assert kafka_configs(secured, tmp_path, *users, "--entity-name", "carol") == (
        "Quota configs for user-principal 'carol' are consumer_byte_rate=2097152.0, "
        "producer_byte_rate=1048576.0\n"
    )

    removed = as_admin(secured, "user", "remove-quota", "carol", "producer_byte_rate")
    assert "Removed the quotas of user carol." in removed.stderr
    as_admin(secured, "user", "remove-quota", "carol", "request_percentage", "--client-id", "etl")
    as_admin(secured, "user", "remove-quota", "<default>", "producer_byte_rate")
    assert quota_rows(secured, "carol") == [["carol", "consumer_byte_rate", "2097152"]]
    assert kafka_configs(secured, tmp_path, *users, "--entity-default") == ""

    unknown = as_admin(secured, "user", "set-quota", "carol", "bogus_rate=1", expect=1)
    assert "error: Invalid configuration key bogus_rate" in unknown.stderr
    not_a_number = as_admin(secured, "user", "set-quota", "carol", "producer_byte_rate=fast",
                            expect=2)  # fmt: skip
    assert "producer_byte_rate: 'fast' is not a number" in not_a_number.stderr
    foreign = as_admin(secured, "user", "quotas", "-X", "client.rack=a", expect=1)
    assert "-X client.rack: this command takes only the security properties" in foreign.stderr


def acl_rows(secured: SecuredBroker, *filters: str) -> list[list[str]]:
    out = as_admin(secured, "acl", "list", *filters).stdout
    return [line.split() for line in out.splitlines()[1:]]


def test_acls_added_listed_and_removed_decide_what_alice_may_write(secured: SecuredBroker) -> None:
    as_admin(secured, "user", "set-password", "alice", stdin="alice-secret\n")
    prefix = unique_name("orders")
    topic = f"{prefix}-eu"
    as_admin(secured, "topic", "create", topic)
    settings = alice(secured, "SCRAM-SHA-512")
    refused = produce_one(settings, topic)
    assert refused is not None and refused.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED

    added = as_admin(secured, "acl", "add", "--principal", "User:alice", "--topic", prefix,
                     "--prefixed", "--operation", "Write", "--operation", "describe")  # fmt: skip
    assert "Added:" in added.stderr
    expected = [
        ["TOPIC", prefix, "PREFIXED", "User:alice", "*", "DESCRIBE", "ALLOW"],
        ["TOPIC", prefix, "PREFIXED", "User:alice", "*", "WRITE", "ALLOW"],
    ]
    assert [line.split() for line in added.stdout.splitlines()[1:]] == expected
    assert acl_rows(secured, "--topic", prefix, "--prefixed") == expected
    assert acl_rows(secured, "--principal", "User:alice") == expected
    assert produce_one(settings, topic) is None

    as_admin(secured, "acl", "add", "--deny", "--principal", "User:alice", "--topic", topic,
             "--operation", "write")  # fmt: skip
    denied = produce_one(settings, topic)
    assert denied is not None and denied.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED

    removed = as_admin(secured, "acl", "remove", "--principal", "User:alice")
    assert "Removed 3 ACL binding(s)" in removed.stderr
    assert acl_rows(secured, "--principal", "User:alice") == []
    everything = as_admin(secured, "acl", "remove", expect=1)
    assert "this would remove every ACL" in everything.stderr


def test_transactions_are_listed_described_and_aborted_by_an_administrator_only(
    secured: SecuredBroker,
) -> None:
    """The transaction commands take the security properties (-X) like every other; aborting
    needs ALTER on the cluster, which carol, who may see the topic, lacks."""
    topic = unique_name("txn")
    as_admin(secured, "topic", "create", topic, "--partitions", "1")
    transactional_id = unique_name("app")
    user, password = ADMIN
    producer = Producer({"bootstrap.servers": secured.sasl_plaintext_bootstrap(),
                         "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                         "sasl.username": user, "sasl.password": password,
                         "transactional.id": transactional_id})  # fmt: skip
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"open", partition=0)
    producer.flush(30)

    listed = as_admin(secured, "transactions", "list").stdout
    assert [transactional_id, "0"] in [line.split()[:2] for line in listed.splitlines()], listed
    described = as_admin(secured, "transactions", "describe", "--transactional-id",
                         transactional_id).stdout  # fmt: skip
    header, row = described.splitlines()
    columns = dict(zip(header.split(), row.split(), strict=True))
    assert (columns["TransactionState"], columns["TopicPartitions"]) == ("Ongoing", f"{topic}-0")

    as_carol = ["--bootstrap-server", secured.sasl_plaintext_bootstrap(),
                "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanism=PLAIN",
                "-X", "sasl.username=carol", "-X", "sasl.password=carol-secret"]  # fmt: skip
    as_admin(secured, "acl", "add", "--principal", "User:carol", "--topic", topic,
             "--operation", "describe")  # fmt: skip
    refused = odradek("transactions", "abort", "--topic", topic, "--partition", "0",
                      "--producer-id", columns["ProducerId"], "--producer-epoch", "0",
                      "--coordinator-epoch", "0", *as_carol, expect=1)  # fmt: skip
    assert "CLUSTER_AUTHORIZATION_FAILED" in refused.stderr, refused.stderr
    done = as_admin(secured, "transactions", "abort", "--topic", topic, "--partition", "0",
                    "--start-offset", "0")  # fmt: skip
    assert f"Aborted the transaction of producer {columns['ProducerId']}" in done.stderr
