#!/usr/bin/env bash
# npm run generate: proto → gen/ts (ts-proto) and clients/go/gen (protoc-gen-go, protoc-gen-go-grpc),
# plus gen/reflection: complete file descriptor sets (imports included) that server reflection serves.
# The two Go plugins are pinned here and installed with `go install` into .tools/bin (once per
# version), which goes first on PATH so buf runs exactly these. Java stubs are generated inside the
# Maven build of clients/java instead (see docs/protocol.md, "Generated code").
set -euo pipefail
cd "$(dirname "$0")/.."

PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2
TOOLS="$PWD/.tools/bin"

if ! command -v go >/dev/null 2>&1; then
  echo "generate: 'go' not found on PATH; Go >= 1.24 is needed to build the pinned Go protoc plugins" >&2
  exit 1
fi

# install BINARY VERSION PACKAGE: go install PACKAGE@VERSION into .tools/bin unless that version is there.
install() {
  local binary=$1 version=$2 package=$3
  if [ -x "$TOOLS/$binary" ] && "$TOOLS/$binary" --version 2>/dev/null | grep -qx "$binary v\?${version#v}"; then
    return
  fi
  echo "generate: installing $binary $version into .tools/bin" >&2
  GOBIN="$TOOLS" GOFLAGS=-mod=mod go install "$package@$version"
}
install protoc-gen-go "$PROTOC_GEN_GO_VERSION" google.golang.org/protobuf/cmd/protoc-gen-go
install protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC_VERSION" google.golang.org/grpc/cmd/protoc-gen-go-grpc

export PATH="$TOOLS:$PWD/node_modules/.bin:$PATH"
buf generate

# Server reflection serves these descriptor sets as they are: every file by its real path, with its
# imports (google/protobuf/duration.proto) and map entries as protoc defines them, which is what
# grpcurl needs to describe and call the services. grpc.health.v1 comes from grpc-health-check.
mkdir -p gen/reflection
buf build --as-file-descriptor-set -o gen/reflection/turnstile.binpb
buf build node_modules/grpc-health-check/proto --as-file-descriptor-set -o gen/reflection/health.binpb
