"""Thin kopf glue: observe, call the builders and planners, apply, write status."""
