"""`odradek broker` (placeholder until implemented)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("broker", help="not implemented yet")
    parser.set_defaults(run=lambda args: 2)
