"""Kafka's security model: SASL mechanisms, credentials and the authorizer."""
