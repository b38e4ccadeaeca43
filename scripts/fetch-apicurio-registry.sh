#!/usr/bin/env bash
# Fetches Apicurio Registry 3 (the schema registry tests/integration/test_schema_registry.py
# runs on Odradek) from Maven Central with mvn and unpacks it into
# ~/.cache/odradek/apicurio-registry-<version>/. Skips when that folder is complete.
# Prints the folder on stdout; progress goes to stderr.
#
# What is fetched: io.apicurio:apicurio-registry-app:<version>:tar.gz:all. Apicurio's release
# build attaches it next to the app's jar: the application already assembled by Quarkus
# (its fast-jar layout: quarkus-run.jar, lib/, app/, quarkus/), so no Quarkus build runs
# here. Run it with `java -jar <folder>/quarkus-run.jar` (docs/schema-registry.md).
set -euo pipefail

VERSION="${APICURIO_REGISTRY_VERSION:-3.3.3}"

say() { printf '[apicurio] %s\n' "$*" >&2; }

cache="${HOME}/.cache/odradek"
repository="${cache}/maven/repository"
target="${cache}/apicurio-registry-${VERSION}"
if [ -f "${target}/.complete" ] && [ -f "${target}/quarkus-run.jar" ]; then
  echo "${target}"
  exit 0
fi

say "fetching io.apicurio:apicurio-registry-app:${VERSION} (Quarkus app, ~160 MB) with mvn"
started=${SECONDS}
nice -n 19 mvn --batch-mode --quiet -Dmaven.repo.local="${repository}" \
  dependency:get -Dtransitive=false \
  -Dartifact="io.apicurio:apicurio-registry-app:${VERSION}:tar.gz:all" >&2
archive="${repository}/io/apicurio/apicurio-registry-app/${VERSION}/apicurio-registry-app-${VERSION}-all.tar.gz"

say "unpacking into ${target}"
work="$(mktemp -d "${cache}/apicurio-registry-${VERSION}.XXXXXX")"
trap 'rm -rf "${work}"' EXIT
nice -n 19 tar -xzf "${archive}" -C "${work}"
if [ ! -f "${work}/quarkus-run.jar" ]; then
  say "${archive} holds no quarkus-run.jar: not a Quarkus fast-jar assembly"
  exit 1
fi
chmod 755 "${work}"
touch "${work}/.complete"
rm -rf "${target}"
mv "${work}" "${target}"
trap - EXIT
say "Apicurio Registry ${VERSION} ready in $((SECONDS - started)) s"
echo "${target}"
