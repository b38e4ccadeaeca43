"""Apache Kafka's jars from Maven Central, fetched once with mvn into ~/.cache/odradek."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

KAFKA_VERSION = "4.3.1"
CACHE = Path.home() / ".cache" / "odradek"
POM = Path(__file__).resolve().parent / "kafka" / "pom.xml"
LOG4J_CONFIG = POM.parent / "log4j2.properties"


def kafka_libs(version: str = KAFKA_VERSION) -> Path:
    """The directory holding Kafka ``version``'s jars and their dependencies; fetched if absent."""
    libs = CACHE / f"kafka-{version}" / "libs"
    if (libs / f"kafka_2.13-{version}.jar").is_file():
        return libs
    print(f"bench: fetching Apache Kafka {version} with mvn into {libs}", file=sys.stderr)
    subprocess.run(
        [
            "mvn",
            "-B",
            "-q",
            "-f",
            str(POM),
            f"-Dkafka.version={version}",
            f"-Dmaven.repo.local={CACHE / 'maven' / 'repository'}",
            "dependency:copy-dependencies",
            f"-DoutputDirectory={libs}",
        ],
        check=True,
    )
    return libs


if __name__ == "__main__":
    print(kafka_libs())
