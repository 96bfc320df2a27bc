#!/usr/bin/env bash
# Builds the upgrade bundle of one Kubernetes release (issue 21): a raw ext4
# file system, label ONEKUBE-BUNDLE, that the operator registers as an
# OpenNebula DATABLOCK image. Each VM of a cluster attaches it to itself
# through OneGate, mounts it read-only by label, checks it, installs the
# binaries, imports the images into containerd and detaches it: the
# release reaches an air-gapped cluster through the cloud's own image store.
#
# Layout (paths relative to the file system's root):
#   onekube-bundle.json  {"kubernetesVersion":"vX.Y.Z","files":{"<path>":"<sha256>",...}}
#   bin/kubeadm bin/kubelet bin/kubectl
#   images/<name>.tar    one docker-archive per image of
#                        `kubeadm config images list --kubernetes-version vX.Y.Z`,
#                        named after the image's last path element
#                        (kube-apiserver.tar, coredns.tar, pause.tar, etcd.tar, ...)
# The image template gets ONEKUBE_BUNDLE_SHA256, the sha256 of
# onekube-bundle.json, so a VM can check what it mounted against what the
# operator registered.
#
# usage: bundle.sh VERSION OUTPUT.img
#   Online (the builder needs the Internet, the cluster does not): the
#   binaries from dl.k8s.io, checked against their published .sha256, and
#   the images from registry.k8s.io with skopeo (docker-archive).
#   BUNDLE_FROM=DIR: offline, from DIR/bin/{kubeadm,kubelet,kubectl} and
#   DIR/images/<name>.tar instead (tests; a mirror). ARCH defaults to amd64.
# Writes OUTPUT.img and OUTPUT.img.tmpl (the `oneimage create` template).
# Needs no root: mkfs.ext4 -d fills the file system from a directory.
set -euo pipefail
version=${1:?usage: bundle.sh VERSION OUTPUT.img}
out=${2:?usage: bundle.sh VERSION OUTPUT.img}
arch=${ARCH:-amd64}
label=ONEKUBE-BUNDLE
fail() { echo "bundle.sh: $*" >&2; exit 1; }
[[ $version =~ ^v1\.[0-9]+\.[0-9]+$ ]] || fail "version $version: want v1.MINOR.PATCH"
command -v mkfs.ext4 >/dev/null || fail "mkfs.ext4 is missing (e2fsprogs)"

# Beside the output, so BUNDLE_FROM's files can be hard-linked, not copied.
stage=$(mktemp -d "$(dirname "$out")/.bundle-stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/images"

if [[ -n ${BUNDLE_FROM:-} ]]; then
	for b in kubeadm kubelet kubectl; do
		[[ -x $BUNDLE_FROM/bin/$b ]] || fail "$BUNDLE_FROM/bin/$b: missing or not executable"
		cp -l "$BUNDLE_FROM/bin/$b" "$stage/bin/$b" 2>/dev/null || cp "$BUNDLE_FROM/bin/$b" "$stage/bin/$b"
	done
else
	command -v curl >/dev/null || fail "curl is missing"
	for b in kubeadm kubelet kubectl; do
		url=https://dl.k8s.io/release/$version/bin/linux/$arch/$b
		curl -fsSL -o "$stage/bin/$b" "$url" || fail "downloading $url"
		want=$(curl -fsSL "$url.sha256") || fail "downloading $url.sha256"
		echo "$want  $stage/bin/$b" | sha256sum -c --quiet - || fail "$b: sha256 mismatch with $url.sha256"
		chmod 0755 "$stage/bin/$b"
	done
fi
got=$("$stage/bin/kubeadm" version -o short) || fail "bin/kubeadm does not run here"
[[ $got == "$version" ]] || fail "bin/kubeadm is $got, not $version"

mapfile -t refs < <("$stage/bin/kubeadm" config images list --kubernetes-version "$version")
[[ ${#refs[@]} -gt 0 ]] || fail "kubeadm config images list gave no image"
for ref in "${refs[@]}"; do
	repo=${ref%:*}
	name=${repo##*/}
	tarball=$stage/images/$name.tar
	if [[ -n ${BUNDLE_FROM:-} ]]; then
		[[ -f $BUNDLE_FROM/images/$name.tar ]] || fail "$BUNDLE_FROM/images/$name.tar: missing (for $ref)"
		cp -l "$BUNDLE_FROM/images/$name.tar" "$tarball" 2>/dev/null || cp "$BUNDLE_FROM/images/$name.tar" "$tarball"
	else
		command -v skopeo >/dev/null || fail "skopeo is missing (apt-get install skopeo)"
		skopeo copy --override-os linux --override-arch "$arch" "docker://$ref" "docker-archive:$tarball:$ref" >/dev/null ||
			fail "pulling $ref"
	fi
	# ctr imports the tags manifest.json names: the tar must carry $ref.
	tar -xOf "$tarball" manifest.json 2>/dev/null | grep -qF "\"$ref\"" ||
		fail "images/$name.tar is not a docker-archive tagged $ref"
done

# The manifest: every file but itself, sorted, with its sha256.
(
	cd "$stage"
	printf '{"kubernetesVersion":"%s","files":{' "$version"
	sep=
	while read -r f; do
		printf '%s"%s":"%s"' "$sep" "$f" "$(sha256sum "$f" | cut -d' ' -f1)"
		sep=,
	done < <(find bin images -type f | LC_ALL=C sort)
	printf '}}\n'
) >"$stage/onekube-bundle.json"
sum=$(sha256sum "$stage/onekube-bundle.json" | cut -d' ' -f1)

# Room for the files, ext4's metadata and 10 %; no journal (read-only).
kib=$(du -sk "$stage" | cut -f1)
size=$((kib + kib / 10 + 8192))
rm -f "$out"
mkfs.ext4 -q -F -L "$label" -O ^has_journal -E root_owner=0:0 -d "$stage" "$out" "${size}K"

cat >"$out.tmpl" <<TMPL
NAME = "onekube-bundle-$version"
TYPE = "DATABLOCK"
PERSISTENT = "NO"
FORMAT = "raw"
DEV_PREFIX = "vd"
PATH = "$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
DESCRIPTION = "onekube upgrade bundle: Kubernetes $version binaries and images"
ONEKUBE_BUNDLE_VERSION = "$version"
ONEKUBE_BUNDLE_SHA256 = "$sum"
TMPL
echo "bundle: $out ($((size / 1024)) MiB, label $label, Kubernetes $version)"
echo "manifest sha256: $sum"
echo "register it:     oneimage create --datastore <image datastore> $out.tmpl"
