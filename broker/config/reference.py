"""Writes docs/configuration.md from the configuration tables (``python3 -m ...``)."""

from __future__ import annotations

import sys
from collections.abc import Mapping

from odradek.broker.config.definitions import BROKER_CONFIGS, TOPIC_CONFIGS, ConfigDef
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


def _table(definitions: Mapping[str, ConfigDef], synonym_column: bool) -> list[str]:
    header = "| key | type | default | description |"
    rule = "|---|---|---|---|"
    if synonym_column:
        header = "| key | type | default | broker default from | description |"
        rule = "|---|---|---|---|---|"
    rows = [header, rule]
    for definition in definitions.values():
        default = format_value(definition.default)
        cells = [
            f"`{definition.name}`",
            definition.type.name.lower(),
            "(none)" if default is None else f"`{default}`",
        ]
        if synonym_column:
            cells.append(f"`{definition.broker_synonym}`" if definition.broker_synonym else "")
        cells.append(definition.doc)
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def render() -> str:
    lines = [_INTRO, "## Broker", "", *_table(BROKER_CONFIGS, False), ""]
    lines += [
        "## Topic",
        "",
        "A topic's own value wins; otherwise the broker key in the fourth column",
        "supplies it (`retention.ms` also falls back to `log.retention.minutes` and",
        "`log.retention.hours`, `segment.ms` to `log.roll.hours`, as in Kafka).",
        "",
        *_table(TOPIC_CONFIGS, True),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(render())
