"""The Odradek broker: Kafka wire protocol, segmented log, cluster membership."""
