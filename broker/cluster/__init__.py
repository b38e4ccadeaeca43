"""Cluster state: the metadata image, its store, replica placement and partitions."""
