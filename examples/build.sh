#!/usr/bin/env bash
# Builds both example clients (npm run build:examples; npm run test:interop runs it first):
#   examples/go/bin/turnstile-example       go build, on the Go client library in clients/go
#   examples/java/target/turnstile-example.jar  mvn package on the Java client library (clients/java,
#                                               installed first into the local Maven repository;
#                                               its tests run in their own step: mvn test there)
# Each step prints how long it took. Needs Go >= 1.26, Java 17 and Maven.
set -euo pipefail
cd "$(dirname "$0")"

step() {
  local label=$1 start=$SECONDS
  shift
  "$@"
  echo "build:examples: $label took $((SECONDS - start)) s" >&2
}
step "go build" bash -c 'cd go && go build -o bin/turnstile-example .'
# Maven 3.8 prints bare colour resets even in batch mode; strip them (errors still show).
step "mvn install (clients/java, tests skipped)" bash -c 'set -o pipefail; cd ../clients/java && mvn -B -q install -DskipTests 2>&1 | sed "s/\x1b\[0m//g"'
step "mvn package" bash -c 'set -o pipefail; cd java && mvn -B -q package 2>&1 | sed "s/\x1b\[0m//g"'
