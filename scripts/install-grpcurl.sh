#!/usr/bin/env bash
# Installs the pinned grpcurl into .tools/bin (once per version) with `go install`, for the
# reflection test (test/server/grpcurl.test.ts), which finds it there or on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

GRPCURL_VERSION=v1.9.3
TOOLS="$PWD/.tools/bin"

if ! command -v go >/dev/null 2>&1; then
  echo "install-grpcurl: 'go' not found on PATH; Go >= 1.24 is needed to build grpcurl $GRPCURL_VERSION" >&2
  exit 1
fi
# go install leaves grpcurl's own -version unset; the module version is in the build info.
if [ -x "$TOOLS/grpcurl" ] && go version -m "$TOOLS/grpcurl" | grep -Eq "^\s+mod\s+github.com/fullstorydev/grpcurl\s+$GRPCURL_VERSION\s"; then
  exit 0
fi
echo "install-grpcurl: installing grpcurl $GRPCURL_VERSION into .tools/bin" >&2
GOBIN="$TOOLS" GOFLAGS=-mod=mod go install "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION"
