#!/usr/bin/env bash
# Fetches Spark's own Kafka connector (spark-sql-kafka-0-10 for the installed pyspark)
# and its runtime dependencies from Maven Central with mvn, into
# ~/.cache/odradek/maven/spark-sql-kafka-<version>/. Artifacts pyspark already ships
# (in any version) are left out so the classpath holds one copy of each. Skips when the folder is complete.
# Prints the folder on stdout; progress goes to stderr.
set -euo pipefail

# The Maven Central reachable here lacks spark-token-provider-kafka after 4.0.0 (the
# connector itself is there); that module only serves Kafka delegation tokens, so an
# older one stands in when the matching version cannot be resolved.
TOKEN_PROVIDER_FALLBACK=4.0.0

say() { printf '[spark-jars] %s\n' "$*" >&2; }

version="$(python3 -c 'import pyspark; print(pyspark.__version__)')"
spark_jars="$(python3 -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
cache="${HOME}/.cache/odradek/maven"
target="${cache}/spark-sql-kafka-${version}"
if [ -f "${target}/.complete" ]; then
  echo "${target}"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

# Spark's poms name extra repositories (a Google mirror); only Maven Central is reachable.
cat >"${work}/settings.xml" <<'SETTINGS'
<settings>
  <mirrors>
    <mirror>
      <id>central-only</id>
      <mirrorOf>*</mirrorOf>
      <url>https://repo.maven.apache.org/maven2</url>
    </mirror>
  </mirrors>
</settings>
SETTINGS

# write_pom TOKEN_PROVIDER_VERSION: the connector at the pyspark version, its token
# provider at the given one.
write_pom() {
  cat >"${work}/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>odradek</groupId>
  <artifactId>spark-kafka-jars</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>org.apache.spark</groupId>
      <artifactId>spark-sql-kafka-0-10_2.13</artifactId>
      <version>${version}</version>
      <exclusions>
        <exclusion>
          <groupId>org.apache.spark</groupId>
          <artifactId>spark-token-provider-kafka-0-10_2.13</artifactId>
        </exclusion>
      </exclusions>
    </dependency>
    <dependency>
      <groupId>org.apache.spark</groupId>
      <artifactId>spark-token-provider-kafka-0-10_2.13</artifactId>
      <version>$1</version>
    </dependency>
  </dependencies>
</project>
POM
}

copy_dependencies() {
  rm -rf "${work}/jars"
  mvn --batch-mode --quiet -s "${work}/settings.xml" -f "${work}/pom.xml" \
    -Dmaven.repo.local="${cache}/repository" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="${work}/jars" >&2
}

say "fetching org.apache.spark:spark-sql-kafka-0-10_2.13:${version} with mvn into ${target}"
write_pom "${version}"
if ! copy_dependencies 2>"${work}/mvn.log"; then
  say "spark-token-provider-kafka ${version} not resolvable; using ${TOKEN_PROVIDER_FALLBACK}"
  write_pom "${TOKEN_PROVIDER_FALLBACK}"
  copy_dependencies
fi

rm -rf "${target}"
mkdir -p "${target}"
for jar in "${work}"/jars/*.jar; do
  artifact="$(basename "${jar}")"
  artifact="${artifact%-*}"  # name-1.2.3.jar -> name
  compgen -G "${spark_jars}/${artifact}-[0-9]*.jar" >/dev/null || cp "${jar}" "${target}/"
done
touch "${target}/.complete"
say "$(find "${target}" -name '*.jar' | wc -l) jars ready"
echo "${target}"
