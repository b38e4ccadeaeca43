"""The group coordinator: consumer-group membership, rebalances and committed offsets.

Sits between ``cluster/`` (partitions of ``__consumer_offsets``, metadata) and
``server/`` (the request handlers that call it).
"""
