"""The network side: Kafka listener, request handlers and the HTTP endpoints."""
