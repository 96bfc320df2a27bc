#!/usr/bin/env bash
# Builds dist/onekube_<version>_<arch>.deb and dist/onekube-<version>.<arch>.rpm
# from bin/ with nfpm (pinned in packaging/tools/go.mod). `make package` runs
# `make build` first; run from anywhere.
#   ONEKUBE_BIN   binaries to package (default: bin/)
#   DIST          output directory (default: dist/)
#   GOARCH        architecture of those binaries (default: go env GOARCH)
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
export ONEKUBE_BIN=${ONEKUBE_BIN:-bin}
export ONEKUBE_ARCH=${GOARCH:-$("$GO" env GOARCH)}
export ONEKUBE_PKG_VERSION=${ONEKUBE_PKG_VERSION:-$(packaging/version.sh)}
DIST=${DIST:-dist}
# Same commit, same package bytes: nfpm stamps every entry with this time.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD)}
export SOURCE_DATE_EPOCH
NFPM=${NFPM:-.tools/nfpm}

for b in onekube-agent onekubed onekube-flow; do
	[[ -x $ONEKUBE_BIN/$b ]] || { echo "package: $ONEKUBE_BIN/$b missing; run make build" >&2; exit 1; }
done

# The tools module keeps nfpm's dependency tree out of the main go.mod.
if [[ ! -x $NFPM ]]; then
	(cd packaging/tools && "$GO" build -trimpath -o "../../$NFPM" github.com/goreleaser/nfpm/v2/cmd/nfpm)
fi

mkdir -p "$DIST"
# Only this build's packages: the tests expect exactly one of each.
rm -f "$DIST"/onekube_*.deb "$DIST"/onekube-*.rpm
for p in deb rpm; do
	"$NFPM" package --config packaging/nfpm.yaml --packager "$p" --target "$DIST/"
done
