#!/usr/bin/env bash
# Builds the real Kubernetes programs of the test bed from the Go module
# proxy, at one tag, into a version-keyed directory:
#   kubeadm kube-apiserver kube-controller-manager kube-scheduler kubectl etcd
# One scratch module requires k8s.io/kubernetes at the tag with upstream's
# staging replaces pinned to the matching v0.x tags, and one `go build`
# compiles the five Kubernetes commands with the version stamped (kubeadm's
# skew checks read it); etcd is the release k8s.io/kubernetes itself requires
# (v3.7.0 for v1.37.2, kubeadm's DefaultEtcdVersion 3.7.0-0), built from the same
# module. A binary already in the directory is kept, so a warm run is a
# no-op; binaries land atomically, so an interrupted build leaves none half
# written. `make kubeadm-oracle` uses this kubeadm: CI compiles it once.
#
# usage: build.sh TAG OUTDIR      e.g. build.sh v1.37.2 ~/.cache/onekube/testbed-v1.37.2
set -euo pipefail
tag=${1:?usage: build.sh TAG OUTDIR}
out=${2:?usage: build.sh TAG OUTDIR}
GO=${GO:-go}
start=$(date +%s)
say() { echo "testbed build [$(($(date +%s) - start))s] $*"; }

k8s_bins=(kubeadm kube-apiserver kube-controller-manager kube-scheduler kubectl)
missing=()
for b in "${k8s_bins[@]}" etcd; do
	[ -x "$out/$b" ] || missing+=("$b")
done
if [ ${#missing[@]} -eq 0 ]; then
	say "all binaries present in $out"
	exit 0
fi
say "building ${missing[*]} at $tag into $out (cold: about 5 min on 2 cores)"

minor=$(echo "$tag" | cut -d. -f2)
stage=v0.${tag#v1.}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
cd "$work"
$GO mod init onekube-testbed-build >/dev/null 2>&1
say "resolving k8s.io/kubernetes@$tag and its staging modules"
mod=$($GO mod download -json "k8s.io/kubernetes@$tag" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
for m in $(sed -n '/^replace (/,/^)/s/^\t\(k8s.io\/[^ ]*\) => .*/\1/p' "$mod"); do
	$GO mod edit -replace "$m=$m@$stage"
done
etcd=$(sed -n 's/^\tgo.etcd.io\/etcd\/server\/v3 \(v[^ ]*\).*/\1/p' "$mod" | head -1)
[ -n "$etcd" ] || { echo "k8s.io/kubernetes@$tag does not require go.etcd.io/etcd/server/v3" >&2; exit 1; }
$GO mod edit -require "k8s.io/kubernetes@$tag"
# go get of the commands records every module and checksum their builds need.
get=()
for b in "${k8s_bins[@]}"; do get+=("k8s.io/kubernetes/cmd/$b@$tag"); done
$GO get "${get[@]}" "go.etcd.io/etcd/server/v3@$etcd" 2>get.log || { cat get.log >&2; exit 1; }

P=k8s.io/component-base/version
ldflags="-s -w -X $P.gitVersion=$tag -X $P.gitMajor=1 -X $P.gitMinor=$minor -X $P.gitTreeState=clean -X $P.buildDate=1970-01-01T00:00:00Z"
mkdir -p bin
pkgs=()
for b in "${k8s_bins[@]}"; do
	[ -x "$out/$b" ] || pkgs+=("k8s.io/kubernetes/cmd/$b")
done
if [ ${#pkgs[@]} -gt 0 ]; then
	say "go build ${pkgs[*]##*/} (one build, shared packages compiled once)"
	CGO_ENABLED=0 $GO build -trimpath -ldflags "$ldflags" -o bin/ "${pkgs[@]}"
fi
if [ ! -x "$out/etcd" ]; then
	say "go build etcd $etcd"
	CGO_ENABLED=0 $GO build -trimpath -ldflags "-s -w" -o bin/etcd go.etcd.io/etcd/server/v3
fi
for f in bin/*; do
	mv -f "$f" "$out/.$(basename "$f").tmp"
	mv -f "$out/.$(basename "$f").tmp" "$out/$(basename "$f")"
done
say "$("$out/kubeadm" version -o short), etcd $("$out/etcd" --version | sed -n 's/^etcd Version: //p'): done"
