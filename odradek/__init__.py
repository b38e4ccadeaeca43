"""Odradek: a Kafka-compatible distributed commit log."""
