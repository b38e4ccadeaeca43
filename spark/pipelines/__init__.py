"""Example pipelines: activity tracking and metrics aggregation, with their event generators."""
