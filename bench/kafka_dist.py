"""Apache Kafka's jars from Maven Central, fetched once with mvn into ~/.cache/odradek, and
the properties files its server and tools read."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
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


def write_properties(path: Path, properties: Mapping[str, str]) -> Path:
    """``properties`` as a Java properties file (server.properties, --command-config)."""
    path.write_text("".join(f"{key}={value}\n" for key, value in properties.items()))
    return path


if __name__ == "__main__":
    print(kafka_libs())
