"""Kafka's BROKER_LOGGER resource: this broker's loggers and their levels, read and
changed at run time (``kafka-configs --entity-type broker-loggers``), with Kafka's
level names. Changes last until the process stops, as in Kafka."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from odradek.broker.protocol.errors import ErrorCode, KafkaError

BROKER_LOGGER_RESOURCE = 8
ROOT = "root"
SET, DELETE = 0, 1

# Kafka's (log4j's) level names and Python's levels; TRACE is finer than DEBUG.
TRACE = 5
LEVELS = {
    "TRACE": TRACE,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
    "OFF": logging.CRITICAL + 10,
}
_NAMES = {level: name for name, level in LEVELS.items()}


def logger_levels() -> dict[str, str]:
    """Every logger of the process (``root`` first) with its effective level's Kafka name."""
    loggers = sorted(
        name
        for name, logger in logging.root.manager.loggerDict.items()
        if isinstance(logger, logging.Logger)
    )
    levels = {ROOT: logging.root.getEffectiveLevel()}
    levels.update((name, logging.getLogger(name).getEffectiveLevel()) for name in loggers)
    return {name: _NAMES.get(level, logging.getLevelName(level)) for name, level in levels.items()}


def check_broker_logger_resource(node_id: int, name: str) -> None:
    if name != str(node_id):
        raise KafkaError(
            ErrorCode.invalid_request, f"broker loggers are named by this broker's id, {node_id}"
        )


def change_levels(changes: Iterable[tuple[str, int, str | None]], validate_only: bool) -> None:
    """IncrementalAlterConfigs on broker loggers: SET a level, DELETE to inherit the root's.

    Everything is checked before anything changes: an unknown logger or level is
    INVALID_CONFIG, another operation INVALID_REQUEST, as in Kafka.
    """
    known = logger_levels()
    planned: list[tuple[str, int]] = []
    for name, operation, value in changes:
        if name not in known:
            raise KafkaError(ErrorCode.invalid_config, f"logger {name} does not exist")
        if operation == SET:
            level = LEVELS.get((value or "").upper())
            if level is None:
                raise KafkaError(
                    ErrorCode.invalid_config,
                    f"{name}: {value!r} is not a level ({', '.join(LEVELS)})",
                )
            planned.append((name, level))
        elif operation == DELETE:
            if name == ROOT:
                raise KafkaError(
                    ErrorCode.invalid_config, "the root logger's level cannot be removed"
                )
            planned.append((name, logging.NOTSET))
        else:
            raise KafkaError(
                ErrorCode.invalid_request, "broker loggers take only SET and DELETE operations"
            )
    if validate_only:
        return
    for name, level in planned:
        (logging.root if name == ROOT else logging.getLogger(name)).setLevel(level)
        logging.getLogger(__name__).info(
            "logger %s set to %s", name, _NAMES.get(level, "the root logger's level")
        )
