"""Write the CRDs to crds/ and the Helm chart: ``python3 -m odradek.operator.crdgen [--check]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .render import rendered_files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m odradek.operator.crdgen")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="repository root")
    parser.add_argument("--check", action="store_true", help="fail if a file is out of date")
    args = parser.parse_args(argv)
    stale = []
    for relative, text in rendered_files().items():
        path = args.root / relative
        if path.exists() and path.read_text() == text:
            continue
        stale.append(relative)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    for relative in stale:
        print(("out of date: " if args.check else "wrote ") + relative)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
