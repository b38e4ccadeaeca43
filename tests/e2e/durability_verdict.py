"""Checks, as a process of its own, that a topic holds every record durability
producers were told was acknowledged (test_durability.check_durability): so the check
can run where the brokers' advertised names resolve (RealCluster.client_argv).

    durability_verdict.py --bootstrap B --topic T --partitions N NAME=REPORT ...

Prints ``durable: <records> records, <acked> acknowledged`` and exits 0, or the failed
assertion and exits 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from test_durability import check_durability, read_partitions, read_report


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--partitions", type=int, required=True)
    parser.add_argument("reports", nargs="+", help="NAME=PATH of an idempotent producer")
    args = parser.parse_args()
    reports = []
    for entry in args.reports:
        name, _, path = entry.partition("=")
        reports.append(read_report(Path(path), name, "idempotent"))
    stored = read_partitions(args.bootstrap, args.topic, args.partitions)
    try:
        check_durability(stored, reports)
    except AssertionError as error:
        print(f"not durable: {error}")
        return 1
    records = sum(map(len, stored.values()))
    acked = sum(len(report.acked) for report in reports)
    print(f"durable: {records} records, {acked} acknowledged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
