"""Every configuration key Odradek understands, with Kafka's names, types and defaults.

One table for broker keys and one for topic keys; a topic key may name the
broker key that supplies its default (Kafka's "synonym"), e.g. ``retention.ms``
falls back to ``log.retention.ms``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1


class ConfigType(enum.IntEnum):
    """Kafka's DescribeConfigs type ids."""

    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigError(ValueError):
    """A configuration value that cannot be accepted; the message names the key."""


Validator = Callable[[str, object], None]


def at_least(minimum: float) -> Validator:
    def check(name: str, value: object) -> None:
        if isinstance(value, int | float) and value < minimum:
            raise ConfigError(f"{name}: {value} is below the minimum {minimum}")

    return check


def between(minimum: float, maximum: float) -> Validator:
    def check(name: str, value: object) -> None:
        if isinstance(value, int | float) and not minimum <= value <= maximum:
            raise ConfigError(f"{name}: {value} is not between {minimum} and {maximum}")

    return check


def one_of(*allowed: str) -> Validator:
    def check(name: str, value: object) -> None:
        items = value if isinstance(value, list) else [value]
        for item in items:
            if item not in allowed:
                raise ConfigError(f"{name}: {item!r} is not one of {', '.join(allowed)}")

    return check


def gzip_level(name: str, value: object) -> None:
    if value != -1 and not (isinstance(value, int) and 1 <= value <= 9):
        raise ConfigError(f"{name}: {value} is not -1 (zlib's default) or a level from 1 to 9")


def throttled_replicas(name: str, value: object) -> None:
    """Kafka's form: ``partition:broker`` pairs, or ``*`` for every replica."""
    items = value if isinstance(value, list) else [value]
    if items == ["*"]:
        return
    for item in items:
        partition, _, broker = str(item).partition(":")
        if not (partition.isdigit() and broker.isdigit()):
            raise ConfigError(
                f"{name}: {item!r} is not partition:broker (a list of them, or * for all)"
            )


def parse_per_ip_overrides(text: str) -> dict[str, int]:
    """``max.connections.per.ip.overrides``: ``host:count`` pairs (the count after the
    last colon, so an IPv6 address may be a host)."""
    overrides: dict[str, int] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        host, _, count = item.rpartition(":")
        if not host or not count.isdigit():
            raise ConfigError(f"{item!r} is not host:count")
        overrides[host.strip("[]")] = int(count)
    return overrides


def per_ip_overrides(name: str, value: object) -> None:
    try:
        parse_per_ip_overrides(str(value))
    except ConfigError as error:
        raise ConfigError(f"{name}: {error}") from None


_OAUTHBEARER_PACKAGES = (
    "org.apache.kafka.common.security.oauthbearer.",  # Kafka 4
    "org.apache.kafka.common.security.oauthbearer.secured.",  # Kafka 3
)
OAUTHBEARER_LOGIN_HANDLERS = tuple(
    p + "OAuthBearerLoginCallbackHandler" for p in _OAUTHBEARER_PACKAGES
)
OAUTHBEARER_VALIDATOR_HANDLERS = tuple(
    p + "OAuthBearerValidatorCallbackHandler" for p in _OAUTHBEARER_PACKAGES
)
OAUTHBEARER_UNSECURED_VALIDATOR_HANDLER = (
    "org.apache.kafka.common.security.oauthbearer.internals.unsecured."
    "OAuthBearerUnsecuredValidatorCallbackHandler"
)


def file_url(name: str, value: object) -> None:
    if value is not None and not str(value).startswith("file:"):
        raise ConfigError(
            f"{name}: {value!r} is not a file URL (a broker reads its OAUTHBEARER token from"
            " a file; token endpoints over http(s) are not supported)"
        )


def no_tiered_storage(name: str, value: object) -> None:
    if value is True:
        raise ConfigError(
            f"{name}: tiered storage is not available on Odradek "
            "(remote.log.storage.system.enable is false)"
        )


@dataclass(frozen=True)
class ConfigDef:
    """One configuration key: its type, default (None: no value) and validation."""

    name: str
    type: ConfigType
    default: object
    doc: str
    validator: Validator | None = None
    broker_synonym: str | None = None
    sensitive: bool = False
    # A broker key that AlterConfigs may change at run time: one of Kafka 4.x's dynamic
    # broker configs (dynamic_configs.py lists those Odradek refuses).
    dynamic: bool = False
    # May be set for one listener as listener.name.<listener>.<name>, as in Kafka.
    per_listener: bool = False
    # ... and for one SASL mechanism of it: listener.name.<listener>.<mechanism>.<name>.
    per_mechanism: bool = False


def _defs(*items: ConfigDef) -> dict[str, ConfigDef]:
    return {item.name: item for item in items}


_COMPRESSION = ("uncompressed", "gzip", "snappy", "lz4", "zstd", "producer")
_TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
DEFAULT_DATA_DIR = "~/.local/share/odradek/data"
DEFAULT_PROTOCOL_MAP = "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"


def _listener_key(
    name: str,
    kind: ConfigType,
    default: object,
    doc: str,
    validator: Validator | None = None,
    sensitive: bool = False,
    per_mechanism: bool = False,
) -> ConfigDef:
    return ConfigDef(
        name,
        kind,
        default,
        doc,
        validator,
        sensitive=sensitive,
        per_listener=True,
        per_mechanism=per_mechanism,
    )


# TLS and SASL, with Kafka's names; each may be set per listener (listener.name.<l>.<key>).
SECURITY_CONFIGS = (
    _listener_key(
        "ssl.keystore.type", ConfigType.STRING, "JKS",
        "The key store's format: PEM or PKCS12 (JKS, Kafka's default, cannot be read).",
    ),
    _listener_key(
        "ssl.keystore.location", ConfigType.STRING, None,
        "The key store file: a PEM file holding the private key and certificate chain, or a"
        " PKCS12 store. Reloaded when it changes (ssl.reload.check.interval.ms).",
    ),
    _listener_key(
        "ssl.keystore.password", ConfigType.PASSWORD, None,
        "The PKCS12 key store's password.", sensitive=True,
    ),
    _listener_key(
        "ssl.key.password", ConfigType.PASSWORD, None,
        "The password of an encrypted PEM private key.", sensitive=True,
    ),
    _listener_key(
        "ssl.keystore.certificate.chain", ConfigType.PASSWORD, None,
        "The certificate chain inline, in PEM (with ssl.keystore.type=PEM).", sensitive=True,
    ),
    _listener_key(
        "ssl.keystore.key", ConfigType.PASSWORD, None,
        "The private key inline, in PEM (with ssl.keystore.type=PEM).", sensitive=True,
    ),
    _listener_key(
        "ssl.truststore.type", ConfigType.STRING, "JKS",
        "The trust store's format: PEM or PKCS12.",
    ),
    _listener_key(
        "ssl.truststore.location", ConfigType.STRING, None,
        "The CA certificates client certificates are checked against (PEM or PKCS12);"
        " reloaded when the file changes.",
    ),
    _listener_key(
        "ssl.truststore.password", ConfigType.PASSWORD, None,
        "The PKCS12 trust store's password.", sensitive=True,
    ),
    _listener_key(
        "ssl.truststore.certificates", ConfigType.PASSWORD, None,
        "The trusted CA certificates inline, in PEM.", sensitive=True,
    ),
    _listener_key(
        "ssl.client.auth", ConfigType.STRING, "none",
        "Whether clients must show a certificate: none, requested or required (mutual TLS).",
        one_of("none", "requested", "required"),
    ),
    _listener_key(
        "ssl.enabled.protocols", ConfigType.LIST, ["TLSv1.2", "TLSv1.3"],
        "The TLS versions accepted: TLSv1.2 and TLSv1.3 (nothing older).",
    ),
    _listener_key(
        "ssl.principal.mapping.rules", ConfigType.STRING, "DEFAULT",
        "How a client certificate's distinguished name becomes a user name: Kafka's"
        " RULE:pattern/replacement/[LU] list, or DEFAULT (the whole DN).",
    ),
    _listener_key(
        "ssl.endpoint.identification.algorithm", ConfigType.STRING, "https",
        "https: a broker checks the host name in the certificate of the broker it replicates"
        " from; empty: it does not.",
    ),
    ConfigDef(
        "ssl.reload.check.interval.ms", ConfigType.LONG, 10_000,
        "How often TLS listeners look for changed key and trust store files (Odradek's own).",
        at_least(100),
    ),
    _listener_key(
        "sasl.enabled.mechanisms", ConfigType.LIST, ["GSSAPI"],
        "The SASL mechanisms a SASL listener offers: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512,"
        " OAUTHBEARER (GSSAPI, Kafka's default, is not supported).",
    ),
    ConfigDef(
        "sasl.mechanism.inter.broker.protocol", ConfigType.STRING, "GSSAPI",
        "The mechanism brokers log in to each other with on a SASL inter-broker listener.",
    ),
    _listener_key(
        "sasl.jaas.config", ConfigType.PASSWORD, None,
        "Kafka's JAAS login for a mechanism, usually as"
        " listener.name.<l>.<mechanism>.sasl.jaas.config: PlainLoginModule's user_<name>"
        " options are the PLAIN users; username/password are what this broker logs in with.",
        sensitive=True, per_mechanism=True,
    ),
    _listener_key(
        "sasl.plain.users.file", ConfigType.STRING, None,
        "A file of name=password lines: the PLAIN users, besides the JAAS user_ options"
        " (Odradek's own).",
    ),
    _listener_key(
        "sasl.plain.check.scram.credentials", ConfigType.BOOLEAN, False,
        "PLAIN also accepts a user's SCRAM password: it is checked against the SCRAM"
        " credentials stored in the cluster (Odradek's own).",
    ),
    _listener_key(
        "connections.max.reauth.ms", ConfigType.LONG, 0,
        "A SASL session's longest life before the client must re-authenticate (KIP-368);"
        " 0: no limit but the credential's own expiry.",
        at_least(0),
    ),
    _listener_key(
        "sasl.server.max.receive.size", ConfigType.INT, 524_288,
        "The largest SASL token accepted before authentication.", at_least(1),
    ),
    _listener_key(
        "sasl.oauthbearer.jwks.endpoint.url", ConfigType.STRING, None,
        "Where OAUTHBEARER tokens' signing keys are: an https, http or file URL of a JWKS.",
    ),
    _listener_key(
        "sasl.oauthbearer.jwks.endpoint.refresh.ms", ConfigType.LONG, 3_600_000,
        "How often the JWKS is fetched again.", at_least(1),
    ),
    _listener_key(
        "sasl.oauthbearer.expected.audience", ConfigType.LIST, [],
        "Audiences a token must name one of (empty: a token must not name one).",
    ),
    _listener_key(
        "sasl.oauthbearer.expected.issuer", ConfigType.STRING, None,
        "The issuer a token must come from (unset: any).",
    ),
    _listener_key(
        "sasl.oauthbearer.sub.claim.name", ConfigType.STRING, "sub",
        "The claim naming the user.",
    ),
    _listener_key(
        "sasl.oauthbearer.scope.claim.name", ConfigType.STRING, "scope",
        "The claim holding the token's scopes.",
    ),
    _listener_key(
        "sasl.oauthbearer.clock.skew.seconds", ConfigType.INT, 30,
        "Clock difference allowed when checking exp, iat and nbf.", at_least(0),
    ),
    _listener_key(
        "sasl.oauthbearer.token.endpoint.url", ConfigType.STRING, None,
        "The token this broker logs in to the others with over OAUTHBEARER: a file URL of a"
        " JWT, read again at every login (a rotated token is picked up). Kafka's token"
        " endpoints over http(s) are not supported.",
        file_url, per_mechanism=True,
    ),
    _listener_key(
        "sasl.login.callback.handler.class", ConfigType.STRING, None,
        "Accepted for Kafka's configs: Kafka's OAuthBearerLoginCallbackHandler, which is"
        " what Odradek's OAUTHBEARER login does; no other class can be loaded.",
        one_of(*OAUTHBEARER_LOGIN_HANDLERS), per_mechanism=True,
    ),
    _listener_key(
        "sasl.server.callback.handler.class", ConfigType.STRING, None,
        "How OAUTHBEARER tokens are checked: unset or Kafka's"
        " OAuthBearerValidatorCallbackHandler, signed JWTs against the JWKS; Kafka's"
        " OAuthBearerUnsecuredValidatorCallbackHandler, unsecured tokens (alg none, for"
        " development only; its unsecuredValidator* JAAS options apply). No other class can"
        " be loaded.",
        one_of(*OAUTHBEARER_VALIDATOR_HANDLERS, OAUTHBEARER_UNSECURED_VALIDATOR_HANDLER),
        per_mechanism=True,
    ),
)  # fmt: skip

# TLS to etcd (https:// etcd.endpoints), named after Kafka's zookeeper.ssl.* keys.
ETCD_TLS_CONFIGS = (
    ConfigDef(
        "etcd.ssl.truststore.location", ConfigType.STRING, None,
        "The CA certificates etcd's server certificate is checked against (PEM or PKCS12);"
        " unset: the system's.",
    ),
    ConfigDef(
        "etcd.ssl.truststore.type", ConfigType.STRING, "PEM", "PEM or PKCS12.",
        one_of("PEM", "PKCS12"),
    ),
    ConfigDef(
        "etcd.ssl.truststore.password", ConfigType.PASSWORD, None,
        "The PKCS12 trust store's password.", sensitive=True,
    ),
    ConfigDef(
        "etcd.ssl.keystore.location", ConfigType.STRING, None,
        "The broker's client certificate for etcd (--client-cert-auth): a PEM file with the"
        " private key and certificate chain, or a PKCS12 store. Reread when it changes.",
    ),
    ConfigDef(
        "etcd.ssl.keystore.type", ConfigType.STRING, "PEM", "PEM or PKCS12.",
        one_of("PEM", "PKCS12"),
    ),
    ConfigDef(
        "etcd.ssl.keystore.password", ConfigType.PASSWORD, None,
        "The PKCS12 key store's password.", sensitive=True,
    ),
    ConfigDef(
        "etcd.ssl.key.password", ConfigType.PASSWORD, None,
        "The password of an encrypted PEM private key.", sensitive=True,
    ),
    ConfigDef(
        "etcd.ssl.endpoint.identification.algorithm", ConfigType.STRING, "https",
        "https: the host name of an etcd endpoint must be in its certificate; empty: not"
        " checked.",
        one_of("https", ""),
    ),
)  # fmt: skip

BROKER_CONFIGS = _defs(
    ConfigDef("node.id", ConfigType.INT, 0, "This broker's id.", at_least(0)),
    ConfigDef(
        "listeners",
        ConfigType.STRING,
        "PLAINTEXT://127.0.0.1:9092",
        "Where the Kafka protocol listens: NAME://host:port, comma-separated; each NAME's"
        " security protocol comes from listener.security.protocol.map. An empty host binds"
        " every interface.",
    ),
    ConfigDef(
        "advertised.listeners",
        ConfigType.STRING,
        None,
        "What clients are told to use, per listener (NAME://host:port); defaults to listeners.",
    ),
    ConfigDef(
        "listener.security.protocol.map",
        ConfigType.STRING,
        DEFAULT_PROTOCOL_MAP,
        "Each listener name's security protocol: NAME:PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL.",
    ),
    ConfigDef(
        "inter.broker.listener.name",
        ConfigType.STRING,
        None,
        "The listener brokers reach each other on (replication, controlled shutdown);"
        " by default the one using security.inter.broker.protocol.",
    ),
    ConfigDef(
        "security.inter.broker.protocol",
        ConfigType.STRING,
        None,
        "The security protocol of the inter-broker listener when"
        " inter.broker.listener.name is not set (PLAINTEXT if neither is).",
    ),
    *SECURITY_CONFIGS,
    ConfigDef(
        "authorizer.class.name",
        ConfigType.STRING,
        "",
        "Turns ACL authorization on: Kafka's org.apache.kafka.metadata.authorizer."
        "StandardAuthorizer or kafka.security.authorizer.AclAuthorizer (both mean the built-in"
        " authorizer); empty: every request is allowed.",
    ),
    ConfigDef(
        "super.users",
        ConfigType.STRING,
        "",
        "Principals allowed everything, separated by semicolons (User:admin;User:CN=broker).",
    ),
    ConfigDef(
        "allow.everyone.if.no.acl.found",
        ConfigType.BOOLEAN,
        False,
        "Allow a request on a resource that no ACL covers at all (otherwise it is denied).",
    ),
    ConfigDef(
        "log.dirs",
        ConfigType.STRING,
        DEFAULT_DATA_DIR,
        "The log directories, comma-separated (JBOD): a new replica goes to the one holding"
        " fewest; the first also holds the broker's own state.",
    ),
    ConfigDef(
        "http.listener",
        ConfigType.STRING,
        "127.0.0.1:9080",
        "host:port of the HTTP side: /metrics, /healthz, /readyz.",
    ),
    ConfigDef("broker.rack", ConfigType.STRING, None, "The rack (zone) of this broker."),
    ConfigDef(
        "num.partitions", ConfigType.INT, 1, "Partitions of auto-created topics.", at_least(1)
    ),
    ConfigDef(
        "default.replication.factor",
        ConfigType.SHORT,
        1,
        "Replication factor of topics created without one.",
        at_least(1),
    ),
    ConfigDef(
        "auto.create.topics.enable",
        ConfigType.BOOLEAN,
        True,
        "Create a topic when a client asks for metadata of an unknown one.",
    ),
    ConfigDef("delete.topic.enable", ConfigType.BOOLEAN, True, "Allow DeleteTopics."),
    ConfigDef(
        "message.max.bytes",
        ConfigType.INT,
        1048588,
        "Largest record batch a topic accepts by default.",
        at_least(0),
        dynamic=True,
    ),
    ConfigDef(
        "socket.request.max.bytes",
        ConfigType.INT,
        104857600,
        "Largest request frame; a larger size prefix closes the connection before any of"
        " the frame is read.",
        at_least(1),
    ),
    ConfigDef(
        "queued.max.requests",
        ConfigType.INT,
        500,
        "Most requests read and not yet answered across the broker (requests waiting in a"
        " purgatory, such as a long-polling Fetch, do not count); while all are taken, a"
        " connection holding a new request reads nothing more.",
        at_least(1),
    ),
    ConfigDef(
        "queued.max.request.bytes",
        ConfigType.LONG,
        -1,
        "Bytes of request frames read (or being read) and not yet answered across the"
        " broker, counted as queued.max.requests counts requests; a frame is read whenever"
        " fewer are held, whatever its size, so they exceed it by one frame at most. 0 or"
        " less: no limit; else at least socket.request.max.bytes.",
    ),
    ConfigDef(
        "connections.max.idle.ms",
        ConfigType.LONG,
        600_000,
        "A connection that has waited this long for its client (for its next request to"
        " arrive, or for a response to be taken) is closed; negative: never.",
    ),
    ConfigDef(
        "fetch.max.bytes",
        ConfigType.INT,
        57671680,
        "Most bytes of records one Fetch response carries, whatever the request asks "
        "(still at least one whole batch, KIP-74).",
        at_least(1024),
    ),
    ConfigDef(
        "max.incremental.fetch.session.cache.slots",
        ConfigType.INT,
        1000,
        "Incremental fetch sessions (KIP-227) the broker keeps; 0 serves every Fetch without "
        "one. A full cache makes room as Kafka's does (docs/broker.md).",
        at_least(0),
    ),
    ConfigDef(
        "max.request.partition.size.limit",
        ConfigType.INT,
        2000,
        "Most partitions one DescribeTopicPartitions response describes.",
        at_least(1),
    ),
    ConfigDef(
        "log.segment.bytes",
        ConfigType.INT,
        1073741824,
        "Size at which a segment rolls.",
        at_least(14),
        dynamic=True,
    ),
    ConfigDef(
        "log.roll.ms",
        ConfigType.LONG,
        None,
        "Age at which a segment rolls.",
        at_least(1),
        dynamic=True,
    ),
    ConfigDef(
        "log.roll.hours",
        ConfigType.INT,
        168,
        "Age at which a segment rolls, in hours.",
        at_least(1),
    ),
    ConfigDef(
        "log.index.interval.bytes",
        ConfigType.INT,
        4096,
        "Bytes between offset index entries.",
        at_least(0),
        dynamic=True,
    ),
    ConfigDef(
        "log.index.size.max.bytes",
        ConfigType.INT,
        10485760,
        "Largest offset or time index of a segment; a full index rolls the segment.",
        at_least(4),
        dynamic=True,
    ),
    ConfigDef(
        "log.roll.jitter.ms",
        ConfigType.LONG,
        None,
        "Most time subtracted at random from the roll age of each segment.",
        at_least(0),
        dynamic=True,
    ),
    ConfigDef(
        "log.roll.jitter.hours",
        ConfigType.INT,
        0,
        "log.roll.jitter.ms in hours.",
        at_least(0),
    ),
    ConfigDef(
        "log.preallocate",
        ConfigType.BOOLEAN,
        False,
        "Accepted for Kafka's configs; Odradek never preallocates segment files.",
        dynamic=True,
    ),
    ConfigDef(
        "log.message.timestamp.before.max.ms",
        ConfigType.LONG,
        LONG_MAX,
        "Oldest a CreateTime record's timestamp may be, relative to the broker's clock.",
        at_least(0),
        dynamic=True,
    ),
    ConfigDef(
        "log.message.timestamp.after.max.ms",
        ConfigType.LONG,
        3600000,
        "Furthest a CreateTime record's timestamp may be ahead of the broker's clock.",
        at_least(0),
        dynamic=True,
    ),
    ConfigDef(
        "compression.gzip.level",
        ConfigType.INT,
        -1,
        "gzip level when the broker compresses (-1: zlib's default).",
        gzip_level,
        dynamic=True,
    ),
    ConfigDef(
        "compression.lz4.level",
        ConfigType.INT,
        9,
        "lz4 level when the broker compresses.",
        between(1, 17),
        dynamic=True,
    ),
    ConfigDef(
        "compression.zstd.level",
        ConfigType.INT,
        3,
        "zstd level when the broker compresses.",
        between(-131072, 22),
        dynamic=True,
    ),
    ConfigDef(
        "log.local.retention.ms",
        ConfigType.LONG,
        -2,
        "Tiered storage's local retention; inert, as Odradek has no tiered storage.",
        at_least(-2),
        dynamic=True,
    ),
    ConfigDef(
        "log.local.retention.bytes",
        ConfigType.LONG,
        -2,
        "Tiered storage's local retention; inert, as Odradek has no tiered storage.",
        at_least(-2),
        dynamic=True,
    ),
    ConfigDef(
        "remote.log.storage.system.enable",
        ConfigType.BOOLEAN,
        False,
        "Tiered storage; Odradek has none, so only false is accepted.",
        no_tiered_storage,
    ),
    ConfigDef(
        "log.flush.interval.messages",
        ConfigType.LONG,
        LONG_MAX,
        "Records appended before an fsync (default: leave it to the page cache).",
        at_least(1),
        dynamic=True,
    ),
    ConfigDef(
        "log.flush.interval.ms",
        ConfigType.LONG,
        None,
        "Time before an fsync (default: leave it to the page cache).",
        at_least(0),
        dynamic=True,
    ),
    ConfigDef(
        "log.retention.ms",
        ConfigType.LONG,
        None,
        "Time to keep a segment.",
        at_least(-1),
        dynamic=True,
    ),
    ConfigDef(
        "log.retention.minutes",
        ConfigType.INT,
        None,
        "Time to keep a segment, in minutes.",
    ),
    ConfigDef(
        "log.retention.hours",
        ConfigType.INT,
        168,
        "Time to keep a segment, in hours.",
    ),
    ConfigDef(
        "log.retention.bytes",
        ConfigType.LONG,
        -1,
        "Size to keep per partition.",
        at_least(-1),
        dynamic=True,
    ),
    ConfigDef(
        "log.cleanup.policy",
        ConfigType.LIST,
        ["delete"],
        "delete, compact or both.",
        one_of("delete", "compact"),
        dynamic=True,
    ),
    ConfigDef(
        "log.cleaner.delete.retention.ms",
        ConfigType.LONG,
        86400000,
        "How long tombstones stay in a compacted log.",
        at_least(0),
        dynamic=True,
    ),
    ConfigDef(
        "log.message.timestamp.type",
        ConfigType.STRING,
        "CreateTime",
        "CreateTime or LogAppendTime.",
        one_of(*_TIMESTAMP_TYPES),
        dynamic=True,
    ),
    ConfigDef(
        "compression.type",
        ConfigType.STRING,
        "producer",
        "Codec of stored batches.",
        one_of(*_COMPRESSION),
        dynamic=True,
    ),
    ConfigDef(
        "min.insync.replicas",
        ConfigType.INT,
        1,
        "In-sync replicas an acks=all write needs.",
        at_least(1),
        dynamic=True,
    ),
    ConfigDef(
        "unclean.leader.election.enable",
        ConfigType.BOOLEAN,
        False,
        "Allow an out-of-sync replica to become leader.",
        dynamic=True,
    ),
    ConfigDef(
        "replica.high.watermark.checkpoint.interval.ms",
        ConfigType.LONG,
        5000,
        "How often high watermarks are checkpointed.",
        at_least(1),
    ),
    ConfigDef(
        "log.retention.check.interval.ms",
        ConfigType.LONG,
        300000,
        "How often segments past retention are looked for.",
        at_least(1),
    ),
    ConfigDef(
        "log.cleaner.enable", ConfigType.BOOLEAN, True, "Run the cleaner for compacted topics."
    ),
    ConfigDef(
        "log.cleaner.backoff.ms",
        ConfigType.LONG,
        15000,
        "Pause of the cleaner when no log needs cleaning.",
        at_least(0),
        dynamic=True,
    ),
    ConfigDef(
        "log.cleaner.min.cleanable.ratio",
        ConfigType.DOUBLE,
        0.5,
        "Dirty share of a log before it is compacted.",
        between(0, 1),
        dynamic=True,
    ),
    ConfigDef(
        "log.cleaner.max.compaction.lag.ms",
        ConfigType.LONG,
        LONG_MAX,
        "Longest a record may stay uncompacted, whatever the dirty ratio.",
        at_least(1),
        dynamic=True,
    ),
    ConfigDef(
        "log.cleaner.min.compaction.lag.ms",
        ConfigType.LONG,
        0,
        "Minimum age of a record before compaction may remove it.",
        at_least(0),
        dynamic=True,
    ),
    ConfigDef(
        "log.segment.delete.delay.ms",
        ConfigType.LONG,
        60000,
        "How long files of deleted segments stay open for reads in progress.",
        at_least(0),
        dynamic=True,
    ),
    ConfigDef(
        "etcd.endpoints",
        ConfigType.LIST,
        [],
        "etcd client URLs; empty runs a single broker on the embedded store.",
    ),
    *ETCD_TLS_CONFIGS,
    ConfigDef(
        "cluster.name",
        ConfigType.STRING,
        "odradek",
        "Name of the cluster: its key prefix in etcd.",
    ),
    ConfigDef(
        "broker.session.timeout.ms",
        ConfigType.INT,
        9000,
        "How long a broker stays registered without reaching etcd.",
        at_least(1000),
    ),
    ConfigDef(
        "broker.heartbeat.interval.ms",
        ConfigType.INT,
        2000,
        "How often a broker refreshes its etcd session; less than broker.session.timeout.ms.",
        at_least(10),
    ),
    ConfigDef(
        "request.timeout.ms",
        ConfigType.INT,
        30000,
        "How long a request between brokers may wait, e.g. WriteTxnMarkers for its markers to"
        " be replicated.",
        at_least(1),
    ),
    ConfigDef(
        "replica.lag.time.max.ms",
        ConfigType.LONG,
        30000,
        "A follower that has not caught up for this long leaves the ISR.",
        at_least(1),
    ),
    ConfigDef(
        "replica.fetch.wait.max.ms",
        ConfigType.INT,
        500,
        "Longest wait of a follower's fetch.",
        at_least(0),
    ),
    ConfigDef(
        "replica.fetch.max.bytes",
        ConfigType.INT,
        1048576,
        "Bytes a follower fetches per partition.",
        at_least(1),
    ),
    ConfigDef(
        "replica.fetch.response.max.bytes",
        ConfigType.INT,
        10485760,
        "Bytes a follower fetches per request.",
        at_least(1),
    ),
    ConfigDef(
        "controlled.shutdown.enable",
        ConfigType.BOOLEAN,
        True,
        "Move leaderships away before a broker stops.",
    ),
    ConfigDef(
        "controlled.shutdown.timeout.ms",
        ConfigType.LONG,
        30000,
        "Longest wait for leaderships to move before stopping anyway.",
        at_least(0),
    ),
    ConfigDef(
        "leader.replication.throttled.rate",
        ConfigType.LONG,
        LONG_MAX,
        "Bytes per second a leader sends to the out-of-sync replicas its topics list in "
        "leader.replication.throttled.replicas.",
        at_least(1),
        dynamic=True,
    ),
    ConfigDef(
        "follower.replication.throttled.rate",
        ConfigType.LONG,
        LONG_MAX,
        "Bytes per second a follower fetches into its out-of-sync replicas that their topics "
        "list in follower.replication.throttled.replicas.",
        at_least(1),
        dynamic=True,
    ),
    ConfigDef(
        "quota.window.num",
        ConfigType.INT,
        11,
        "Samples over which client quotas (byte rates, request percentage) are measured.",
        at_least(1),
    ),
    ConfigDef(
        "quota.window.size.seconds",
        ConfigType.INT,
        1,
        "Length of one client quota sample.",
        at_least(1),
    ),
    ConfigDef(
        "socket.listen.backlog.size",
        ConfigType.INT,
        # Kafka's 50 suits its acceptor thread, which does nothing else; Odradek accepts on
        # the event loop that serves requests, so a burst of connects must wait in the
        # kernel (Linux caps this at net.core.somaxconn, 4096 by default).
        4096,
        "Connections a listener holds waiting to be served (its socket's backlog, and those"
        " waiting on max.connections or a creation rate); more are closed. Linux caps the"
        " socket's backlog at net.core.somaxconn.",
        at_least(1),
    ),
    ConfigDef(
        "max.connections",
        ConfigType.INT,
        INT_MAX,
        "Most connections the broker holds on all listeners but the inter-broker one; a"
        " new connection waits for a free slot, and an inter-broker connection over the limit"
        " closes the least recently active other one. Per listener as"
        " listener.name.<l>.max.connections, which also bounds the inter-broker listener.",
        at_least(0),
        dynamic=True,
        per_listener=True,
    ),
    ConfigDef(
        "max.connections.per.ip",
        ConfigType.INT,
        INT_MAX,
        "Most connections from one address; more are closed at once. 0 admits only the"
        " addresses of max.connections.per.ip.overrides.",
        at_least(0),
        dynamic=True,
    ),
    ConfigDef(
        "max.connections.per.ip.overrides",
        ConfigType.STRING,
        "",
        "Per-address exceptions to max.connections.per.ip: host:count pairs, comma-separated"
        " (a host name stands for the addresses it resolves to).",
        per_ip_overrides,
        dynamic=True,
    ),
    ConfigDef(
        "max.connection.creation.rate",
        ConfigType.INT,
        INT_MAX,
        "Most new connections per second the broker accepts on all listeners but the"
        " inter-broker one, measured as client quotas are; faster ones wait. Per listener"
        " as listener.name.<l>.max.connection.creation.rate.",
        at_least(0),
        dynamic=True,
        per_listener=True,
    ),
    ConfigDef(
        "controller.quota.window.num",
        ConfigType.INT,
        11,
        "Samples of the controller mutation quota: its token bucket holds this many"
        " samples' worth of the rate.",
        at_least(1),
    ),
    ConfigDef(
        "controller.quota.window.size.seconds",
        ConfigType.INT,
        1,
        "Length of one controller mutation quota sample.",
        at_least(1),
    ),
    ConfigDef(
        "replication.quota.window.num",
        ConfigType.INT,
        11,
        "Samples over which the replication quotas are measured.",
        at_least(1),
    ),
    ConfigDef(
        "replication.quota.window.size.seconds",
        ConfigType.INT,
        1,
        "Length of one replication quota sample.",
        at_least(1),
    ),
    ConfigDef(
        "replica.selector.class",
        ConfigType.STRING,
        None,
        "Set to org.apache.kafka.common.replica.RackAwareReplicaSelector to let consumers "
        "with client.rack fetch from an in-sync replica in their rack (KIP-392).",
    ),
    ConfigDef(
        "auto.leader.rebalance.enable",
        ConfigType.BOOLEAN,
        True,
        "Move leadership back to preferred replicas periodically.",
    ),
    ConfigDef(
        "leader.imbalance.check.interval.seconds",
        ConfigType.LONG,
        300,
        "How often preferred leaders are restored.",
        at_least(1),
    ),
    ConfigDef(
        "transaction.state.log.num.partitions",
        ConfigType.INT,
        50,
        "Partitions of __transaction_state, fixed when it is created.",
        at_least(1),
    ),
    ConfigDef(
        "transaction.state.log.replication.factor",
        ConfigType.SHORT,
        3,
        "Replication factor of __transaction_state (its creation waits for as many live brokers).",
        at_least(1),
    ),
    ConfigDef(
        "transaction.state.log.min.isr",
        ConfigType.INT,
        2,
        "min.insync.replicas of __transaction_state.",
        at_least(1),
    ),
    ConfigDef(
        "transaction.state.log.segment.bytes",
        ConfigType.INT,
        104857600,
        "segment.bytes of __transaction_state.",
        at_least(14),
    ),
    ConfigDef(
        "transaction.max.timeout.ms",
        ConfigType.INT,
        900000,
        "The longest transaction.timeout.ms a producer may ask for"
        " (INVALID_TRANSACTION_TIMEOUT beyond).",
        at_least(1),
    ),
    ConfigDef(
        "add.partitions.to.txn.retry.backoff.ms",
        ConfigType.INT,
        20,
        "How long a broker waits before asking the transaction coordinator again to add a"
        " partition to a transaction of version 2 (a Produce's, or TxnOffsetCommit's offsets"
        " partition) while the producer's previous transaction is still completing.",
        at_least(1),
    ),
    ConfigDef(
        "add.partitions.to.txn.retry.backoff.max.ms",
        ConfigType.INT,
        100,
        "How long a broker keeps asking again (add.partitions.to.txn.retry.backoff.ms) before"
        " it answers with the coordinator's refusal, which the client retries. 0 never asks"
        " again.",
        at_least(0),
    ),
    ConfigDef(
        "transaction.partition.verification.enable",
        ConfigType.BOOLEAN,
        True,
        "Whether a partition leader asks the transaction coordinator before a producer's"
        " first transactional batch opens a transaction there (KIP-890): a batch sent after"
        " its transaction ended is refused instead of holding read_committed readers back."
        " Requests of transaction version 2 (Produce v12+) always go to the coordinator,"
        " which adds the partition.",
        dynamic=True,
    ),
    ConfigDef(
        "transactional.id.expiration.ms",
        ConfigType.INT,
        604800000,
        "A transactional id without a transaction for this long is forgotten.",
        at_least(1),
    ),
    ConfigDef(
        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        ConfigType.INT,
        10000,
        "How often transactions past their timeout are looked for and aborted.",
        at_least(1),
    ),
    ConfigDef(
        "transaction.remove.expired.transaction.cleanup.interval.ms",
        ConfigType.INT,
        3600000,
        "How often expired transactional ids are looked for.",
        at_least(1),
    ),
    ConfigDef(
        "offsets.topic.num.partitions",
        ConfigType.INT,
        50,
        "Partitions of __consumer_offsets, fixed when it is created.",
        at_least(1),
    ),
    ConfigDef(
        "offsets.topic.replication.factor",
        ConfigType.SHORT,
        3,
        "Replication factor of __consumer_offsets (at most the live brokers at creation).",
        at_least(1),
    ),
    ConfigDef(
        "offsets.retention.minutes",
        ConfigType.INT,
        10080,
        "How long committed offsets of an empty group (or a standalone consumer) are kept.",
        at_least(1),
    ),
    ConfigDef(
        "offsets.retention.check.interval.ms",
        ConfigType.LONG,
        600000,
        "How often offsets past retention are looked for.",
        at_least(1),
    ),
    ConfigDef(
        "offsets.commit.timeout.ms",
        ConfigType.INT,
        5000,
        "How long a commit or group write may wait to be replicated.",
        at_least(1),
    ),
    ConfigDef(
        "offset.metadata.max.bytes",
        ConfigType.INT,
        4096,
        "Largest metadata string a committed offset may carry.",
        at_least(0),
    ),
    ConfigDef(
        "group.initial.rebalance.delay.ms",
        ConfigType.INT,
        3000,
        "How long a new group waits for more members before its first rebalance.",
        at_least(0),
    ),
    ConfigDef(
        "group.min.session.timeout.ms",
        ConfigType.INT,
        6000,
        "Smallest session timeout a group member may ask for.",
        at_least(0),
    ),
    ConfigDef(
        "group.max.session.timeout.ms",
        ConfigType.INT,
        1800000,
        "Largest session timeout a group member may ask for.",
        at_least(0),
    ),
    ConfigDef(
        "group.max.size",
        ConfigType.INT,
        INT_MAX,
        "Most members a group may have.",
        at_least(1),
    ),
    ConfigDef(
        "group.consumer.heartbeat.interval.ms",
        ConfigType.INT,
        5000,
        "How often members of consumer groups (KIP-848) heartbeat.",
        at_least(1),
    ),
    ConfigDef(
        "group.consumer.session.timeout.ms",
        ConfigType.INT,
        45000,
        "How long a consumer group member (KIP-848) may go without a heartbeat.",
        at_least(1),
    ),
    ConfigDef(
        "group.consumer.max.size",
        ConfigType.INT,
        INT_MAX,
        "Most members a consumer group (KIP-848) may have.",
        at_least(1),
    ),
    ConfigDef(
        "group.consumer.migration.policy",
        ConfigType.STRING,
        "bidirectional",
        "Whether a live group may change between the classic and the consumer protocol: "
        "bidirectional, upgrade, downgrade or disabled.",
        one_of("bidirectional", "upgrade", "downgrade", "disabled"),
    ),
    ConfigDef(
        "group.consumer.assignors",
        ConfigType.LIST,
        ["uniform", "range"],
        "Server-side assignors of consumer groups (KIP-848); the first is the default.",
        one_of(
            "uniform",
            "range",
            "org.apache.kafka.coordinator.group.assignor.UniformAssignor",
            "org.apache.kafka.coordinator.group.assignor.RangeAssignor",
        ),
    ),
    ConfigDef(
        "group.share.heartbeat.interval.ms",
        ConfigType.INT,
        5000,
        "How often members of share groups (KIP-932) heartbeat.",
        at_least(1),
    ),
    ConfigDef(
        "group.share.min.heartbeat.interval.ms",
        ConfigType.INT,
        5000,
        "Lowest heartbeat interval of share group members.",
        at_least(1),
    ),
    ConfigDef(
        "group.share.max.heartbeat.interval.ms",
        ConfigType.INT,
        15000,
        "Highest heartbeat interval of share group members.",
        at_least(1),
    ),
    ConfigDef(
        "group.share.session.timeout.ms",
        ConfigType.INT,
        45000,
        "How long a share group member may go without a heartbeat.",
        at_least(1),
    ),
    ConfigDef(
        "group.share.min.session.timeout.ms",
        ConfigType.INT,
        45000,
        "Lowest session timeout of share group members.",
        at_least(1),
    ),
    ConfigDef(
        "group.share.max.session.timeout.ms",
        ConfigType.INT,
        60000,
        "Highest session timeout of share group members.",
        at_least(1),
    ),
    ConfigDef(
        "group.share.max.size",
        ConfigType.INT,
        200,
        "Most members a share group may have.",
        between(1, 1000),
    ),
    ConfigDef(
        "group.share.record.lock.duration.ms",
        ConfigType.INT,
        30000,
        "How long a share group member holds records it acquired before they are offered "
        "again (a group's share.record.lock.duration.ms overrides it).",
        between(1000, 3600000),
    ),
    ConfigDef(
        "group.share.min.record.lock.duration.ms",
        ConfigType.INT,
        15000,
        "Lowest share.record.lock.duration.ms a share group may set.",
        between(1000, 30000),
    ),
    ConfigDef(
        "group.share.max.record.lock.duration.ms",
        ConfigType.INT,
        60000,
        "Highest share.record.lock.duration.ms a share group may set.",
        between(30000, 3600000),
    ),
    ConfigDef(
        "group.share.delivery.count.limit",
        ConfigType.INT,
        5,
        "Deliveries of a record to a share group after which it is archived, not offered again.",
        between(2, 10),
    ),
    ConfigDef(
        "group.share.partition.max.record.locks",
        ConfigType.INT,
        2000,
        "Most records of one partition a share group may have in flight (acquired or to be "
        "offered again).",
        between(100, 10000),
    ),
    ConfigDef(
        "group.share.max.share.sessions",
        ConfigType.INT,
        2000,
        "Most share sessions (a share consumer's ShareFetch context) a broker keeps.",
        at_least(1),
    ),
    ConfigDef(
        "share.coordinator.state.topic.num.partitions",
        ConfigType.INT,
        50,
        "Partitions of __share_group_state (set before the topic is first created).",
        at_least(1),
    ),
    ConfigDef(
        "share.coordinator.state.topic.replication.factor",
        ConfigType.SHORT,
        3,
        "Replication factor of __share_group_state (its creation waits for as many live brokers).",
        at_least(1),
    ),
    ConfigDef(
        "share.coordinator.state.topic.min.isr",
        ConfigType.SHORT,
        2,
        "min.insync.replicas of __share_group_state.",
        at_least(1),
    ),
    ConfigDef(
        "share.coordinator.state.topic.segment.bytes",
        ConfigType.INT,
        104857600,
        "segment.bytes of __share_group_state.",
        at_least(14),
    ),
    ConfigDef(
        "share.coordinator.write.timeout.ms",
        ConfigType.INT,
        5000,
        "How long a share-state write may wait for its replicas.",
        at_least(1),
    ),
)

TOPIC_CONFIGS = _defs(
    ConfigDef(
        "cleanup.policy",
        ConfigType.LIST,
        ["delete"],
        "delete, compact or both.",
        one_of("delete", "compact"),
        "log.cleanup.policy",
    ),
    ConfigDef(
        "compression.type",
        ConfigType.STRING,
        "producer",
        "Codec of stored batches.",
        one_of(*_COMPRESSION),
        "compression.type",
    ),
    ConfigDef(
        "compression.gzip.level",
        ConfigType.INT,
        -1,
        "gzip level when the broker compresses this topic's batches.",
        gzip_level,
        "compression.gzip.level",
    ),
    ConfigDef(
        "compression.lz4.level",
        ConfigType.INT,
        9,
        "lz4 level when the broker compresses this topic's batches.",
        between(1, 17),
        "compression.lz4.level",
    ),
    ConfigDef(
        "compression.zstd.level",
        ConfigType.INT,
        3,
        "zstd level when the broker compresses this topic's batches.",
        between(-131072, 22),
        "compression.zstd.level",
    ),
    ConfigDef(
        "delete.retention.ms",
        ConfigType.LONG,
        86400000,
        "How long tombstones stay.",
        at_least(0),
        "log.cleaner.delete.retention.ms",
    ),
    ConfigDef(
        "file.delete.delay.ms",
        ConfigType.LONG,
        60000,
        "How long files of deleted segments stay open for reads in progress.",
        at_least(0),
        "log.segment.delete.delay.ms",
    ),
    ConfigDef(
        "flush.messages",
        ConfigType.LONG,
        LONG_MAX,
        "Records appended before an fsync.",
        at_least(1),
        "log.flush.interval.messages",
    ),
    ConfigDef(
        "flush.ms",
        ConfigType.LONG,
        LONG_MAX,
        "Time before an fsync.",
        at_least(0),
        "log.flush.interval.ms",
    ),
    ConfigDef(
        "follower.replication.throttled.replicas",
        ConfigType.LIST,
        [],
        "Replicas (partition:broker, or *) whose fetches their broker throttles to "
        "follower.replication.throttled.rate while they are out of sync.",
        throttled_replicas,
    ),
    ConfigDef(
        "index.interval.bytes",
        ConfigType.INT,
        4096,
        "Bytes between offset index entries.",
        at_least(0),
        "log.index.interval.bytes",
    ),
    ConfigDef(
        "leader.replication.throttled.replicas",
        ConfigType.LIST,
        [],
        "Leader replicas (partition:broker, or *) that send to out-of-sync followers at "
        "most leader.replication.throttled.rate.",
        throttled_replicas,
    ),
    ConfigDef(
        "local.retention.bytes",
        ConfigType.LONG,
        -2,
        "Tiered storage's local retention (-2: retention.bytes); inert, as Odradek has "
        "no tiered storage.",
        at_least(-2),
        "log.local.retention.bytes",
    ),
    ConfigDef(
        "local.retention.ms",
        ConfigType.LONG,
        -2,
        "Tiered storage's local retention (-2: retention.ms); inert, as Odradek has no "
        "tiered storage.",
        at_least(-2),
        "log.local.retention.ms",
    ),
    ConfigDef(
        "max.compaction.lag.ms",
        ConfigType.LONG,
        LONG_MAX,
        "Longest a record may stay uncompacted, whatever the dirty ratio.",
        at_least(1),
        "log.cleaner.max.compaction.lag.ms",
    ),
    ConfigDef(
        "max.message.bytes",
        ConfigType.INT,
        1048588,
        "Largest record batch accepted.",
        at_least(0),
        "message.max.bytes",
    ),
    ConfigDef(
        "message.timestamp.after.max.ms",
        ConfigType.LONG,
        3600000,
        "Furthest a CreateTime record's timestamp may be ahead of the broker's clock.",
        at_least(0),
        "log.message.timestamp.after.max.ms",
    ),
    ConfigDef(
        "message.timestamp.before.max.ms",
        ConfigType.LONG,
        LONG_MAX,
        "Oldest a CreateTime record's timestamp may be, relative to the broker's clock.",
        at_least(0),
        "log.message.timestamp.before.max.ms",
    ),
    ConfigDef(
        "message.timestamp.type",
        ConfigType.STRING,
        "CreateTime",
        "CreateTime or LogAppendTime.",
        one_of(*_TIMESTAMP_TYPES),
        "log.message.timestamp.type",
    ),
    ConfigDef(
        "min.cleanable.dirty.ratio",
        ConfigType.DOUBLE,
        0.5,
        "Dirty share of a log before it is compacted.",
        between(0, 1),
        "log.cleaner.min.cleanable.ratio",
    ),
    ConfigDef(
        "min.compaction.lag.ms",
        ConfigType.LONG,
        0,
        "Minimum age of a record before compaction may remove it.",
        at_least(0),
        "log.cleaner.min.compaction.lag.ms",
    ),
    ConfigDef(
        "min.insync.replicas",
        ConfigType.INT,
        1,
        "In-sync replicas an acks=all write needs.",
        at_least(1),
        "min.insync.replicas",
    ),
    ConfigDef(
        "preallocate",
        ConfigType.BOOLEAN,
        False,
        "Accepted for Kafka's configs; Odradek never preallocates segment files (they "
        "grow by appends, which costs nothing on Linux file systems).",
        None,
        "log.preallocate",
    ),
    ConfigDef(
        "remote.log.copy.disable",
        ConfigType.BOOLEAN,
        False,
        "Tiered storage; inert, as Odradek has no tiered storage.",
        None,
    ),
    ConfigDef(
        "remote.log.delete.on.disable",
        ConfigType.BOOLEAN,
        False,
        "Tiered storage; inert, as Odradek has no tiered storage.",
        None,
    ),
    ConfigDef(
        "remote.storage.enable",
        ConfigType.BOOLEAN,
        False,
        "Tiered storage; Odradek has none, so only false is accepted.",
        no_tiered_storage,
    ),
    ConfigDef(
        "retention.bytes",
        ConfigType.LONG,
        -1,
        "Size to keep per partition (-1: no limit).",
        at_least(-1),
        "log.retention.bytes",
    ),
    ConfigDef(
        "retention.ms",
        ConfigType.LONG,
        604800000,
        "Time to keep a segment (-1: forever).",
        at_least(-1),
        "log.retention.ms",
    ),
    ConfigDef(
        "segment.bytes",
        ConfigType.INT,
        1073741824,
        "Size at which a segment rolls.",
        at_least(14),
        "log.segment.bytes",
    ),
    ConfigDef(
        "segment.index.bytes",
        ConfigType.INT,
        10485760,
        "Largest offset or time index of a segment; a full index rolls the segment.",
        at_least(4),
        "log.index.size.max.bytes",
    ),
    ConfigDef(
        "segment.jitter.ms",
        ConfigType.LONG,
        0,
        "Most time subtracted at random from segment.ms for each segment.",
        at_least(0),
        "log.roll.jitter.ms",
    ),
    ConfigDef(
        "segment.ms",
        ConfigType.LONG,
        604800000,
        "Age at which a segment rolls.",
        at_least(1),
        "log.roll.ms",
    ),
    ConfigDef(
        "unclean.leader.election.enable",
        ConfigType.BOOLEAN,
        False,
        "Allow an out-of-sync replica to become leader.",
        None,
        "unclean.leader.election.enable",
    ),
)
