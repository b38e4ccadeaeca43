"""Entry point: ``kopf run -m odradek.operator.main`` registers every handler."""

from __future__ import annotations

from .handlers import kopf_handlers

__all__ = ["kopf_handlers"]
