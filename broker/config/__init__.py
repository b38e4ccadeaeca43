"""Broker and topic configuration, by Kafka's names."""
