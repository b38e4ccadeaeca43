"""Writes docs/configuration.md from the configuration tables (``python3 -m ...``)."""

from __future__ import annotations

import sys
from collections.abc import Mapping

from odradek.broker.config.definitions import BROKER_CONFIGS, TOPIC_CONFIGS, ConfigDef
from odradek.broker.config.dynamic_configs import (
    UNSUPPORTED_DYNAMIC_CONFIGS,
    UNSUPPORTED_DYNAMIC_PREFIXES,
)
from odradek.broker.config.dynamic_group_configs import GROUP_CONFIGS
from odradek.broker.config.parsing import format_value

_INTRO = """# Configuration reference

Generated from `broker/config/definitions.py` by
`python3 -m odradek.broker.config.reference > docs/configuration.md`; a test
fails when this page and the code disagree.

Keys use Apache Kafka's names. A broker reads them from a properties file
(`odradek broker --config FILE`), from `ODRADEK_<KEY>` environment variables
(upper case, dots as underscores: `ODRADEK_LOG_DIRS`) and from
`--set key=value` flags, in increasing precedence. An unknown key or a bad
value stops the broker with a message naming the key.
"""


_DYNAMIC = """## Dynamic broker configs

Keys marked dynamic above can change while brokers run, as in Kafka 4.x:
IncrementalAlterConfigs or AlterConfigs on a broker id (`kafka-configs
--entity-type brokers --entity-name 1`) or on the cluster-wide default
(`--entity-default`), stored in the cluster's metadata. A broker resolves each
key from its own dynamic value, then the cluster-wide dynamic default, then its
static value, then the default; DescribeConfigs reports which
(DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG,
DEFAULT_CONFIG) and lists the others as synonyms; the cluster-wide default
resource (`""`) lists the dynamic defaults only, and `read_only` marks the static
keys, as in Kafka. A change applies at once to the logs of every topic that takes
the key as its default, to `min.insync.replicas` and unclean leader election, to
the replication throttles, and within a second to the log cleaner's pause.

The dynamic keys are exactly those of Kafka's list that Odradek implements. Any
other key of the table above is static: setting it dynamically is refused with
INVALID_REQUEST and Kafka's message, `Cannot update these configs dynamically:
[num.partitions]` (Kafka too refuses `log.retention.hours`,
`log.retention.minutes`, `log.roll.hours` and `log.roll.jitter.hours`: use the
`.ms` keys). Kafka's remaining dynamic keys belong to features Odradek does not
have; they are refused with INVALID_REQUEST and the reason, rather than stored
and ignored:
"""


_GROUP = """## Group

Kafka 4.3's group configs (KIP-848, KIP-932): set on one group with
IncrementalAlterConfigs or AlterConfigs on the group resource (`kafka-configs
--entity-type groups --entity-name orders-app --add-config
consumer.session.timeout.ms=50000`), stored in the cluster's metadata, whether or not
the group exists yet; deleting a group's last config removes its entry. A group's own
value wins; otherwise the broker key in the fourth column supplies it (Kafka's default
where Odradek has no such broker key). DescribeConfigs reports a group's own value as
DYNAMIC_GROUP_CONFIG and the broker key as its synonym. Values are checked as Kafka
checks them, against the broker's `group.<kind>.min.*` / `group.<kind>.max.*` bounds
(Kafka's defaults where Odradek has no such key): a bad value or an unknown name is
INVALID_CONFIG naming the config, e.g. `consumer.session.timeout.ms must be greater
than or equal to group.consumer.min.session.timeout.ms (45000)`.
"""


def _table(definitions: Mapping[str, ConfigDef], broker_table: bool) -> list[str]:
    header = "| key | type | default | dynamic | description |"
    rule = "|---|---|---|---|---|"
    if not broker_table:
        header = "| key | type | default | broker default from | description |"
    rows = [header, rule]
    for definition in definitions.values():
        default = format_value(definition.default)
        cells = [
            f"`{definition.name}`",
            definition.type.name.lower(),
            "(none)" if default is None else f"`{default}`",
        ]
        if broker_table:
            cells.append("dynamic" if definition.dynamic else "")
        else:
            cells.append(f"`{definition.broker_synonym}`" if definition.broker_synonym else "")
        cells.append(definition.doc)
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def _refused_table() -> list[str]:
    by_reason: dict[str, list[str]] = {}
    for name, reason in UNSUPPORTED_DYNAMIC_CONFIGS.items():
        by_reason.setdefault(reason, []).append(f"`{name}`")
    for prefix, reason in UNSUPPORTED_DYNAMIC_PREFIXES.items():
        by_reason.setdefault(reason, []).append(f"`{prefix}*`")
    rows = ["| Kafka's dynamic keys | refused because |", "|---|---|"]
    rows += [f"| {', '.join(names)} | {reason}. |" for reason, names in by_reason.items()]
    return rows


def render() -> str:
    lines = [_INTRO, "## Broker", "", *_table(BROKER_CONFIGS, True), ""]
    lines += [_DYNAMIC, *_refused_table(), ""]
    lines += [
        "## Topic",
        "",
        "A topic's own value wins; otherwise the broker key in the fourth column",
        "supplies it (`retention.ms` also falls back to `log.retention.minutes` and",
        "`log.retention.hours`, `segment.ms` to `log.roll.hours`, as in Kafka).",
        "",
        *_table(TOPIC_CONFIGS, False),
        "",
        _GROUP,
        *_table(GROUP_CONFIGS, False),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(render())
