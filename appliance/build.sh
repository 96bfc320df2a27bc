#!/usr/bin/env bash
# Builds the onekube appliance image with Packer, or only validates the
# recipe. Run from anywhere:
#
#   appliance/build.sh [build|validate]
#
# Inputs (environment):
#   ONE_APPS_DIR         checkout of OpenNebula/one-apps (the service driver)   required
#   BASE_IMAGE           Debian qcow2 with one-context, e.g. one-apps'
#                        export/debian12.qcow2 (`make debian12` there)          required
#   BASE_IMAGE_CHECKSUM  Packer checksum of BASE_IMAGE (default: none)
#   ONEKUBE_DEB          the .deb from `make package` (default: dist/onekube_*_amd64.deb)
#   OUTPUT_DIR           work and output directory (default: build/appliance)
#   ONEKUBE_*_VERSION    override a pin of appliance/versions.env
#   PACKER               the packer binary (default: packer; >= 1.7 to build)
#
# The result is dist/onekube-<k8s version>.qcow2.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
action=${1:-build}
PACKER=${PACKER:-packer}

# Pins: versions.env, each overridable by an environment variable.
while IFS='=' read -r key value; do
	[[ $key =~ ^ONEKUBE_[A-Z0-9_]+$ ]] || continue
	[[ -n ${!key:-} ]] || printf -v "$key" '%s' "$value"
done <"$here/versions.env"

: "${ONE_APPS_DIR:?set ONE_APPS_DIR to a checkout of https://github.com/OpenNebula/one-apps}"
: "${BASE_IMAGE:?set BASE_IMAGE to a Debian qcow2 with one-context (one-apps: make debian12)}"
if [[ -z ${ONEKUBE_DEB:-} ]]; then
	debs=("$repo"/dist/onekube_*_amd64.deb)
	[[ ${#debs[@]} == 1 && -f ${debs[0]} ]] || { echo "build.sh: want one dist/onekube_*_amd64.deb (make package), or set ONEKUBE_DEB" >&2; exit 1; }
	ONEKUBE_DEB=${debs[0]}
fi
OUTPUT_DIR=${OUTPUT_DIR:-$repo/build/appliance}
mkdir -p "$OUTPUT_DIR"

# The build VM's root password lives only as long as the build.
password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')

vars=(
	-var "k8s_version=$ONEKUBE_K8S_VERSION"
	-var "containerd_version=$ONEKUBE_CONTAINERD_VERSION"
	-var "runc_version=$ONEKUBE_RUNC_VERSION"
	-var "flannel_version=$ONEKUBE_FLANNEL_VERSION"
	-var "calico_version=$ONEKUBE_CALICO_VERSION"
	-var "onekube_deb=$ONEKUBE_DEB"
	-var "one_apps_dir=$ONE_APPS_DIR"
	-var "base_image=$BASE_IMAGE"
	-var "base_image_checksum=${BASE_IMAGE_CHECKSUM:-none}"
	-var "ssh_password=$password"
	-var "input_dir=$here/packer"
	-var "output_dir=$OUTPUT_DIR"
)

# packer_major_minor: e.g. 1006 for v1.6.6, 1011 for v1.11.2.
packer_major_minor() {
	local v
	v=$("$PACKER" version | head -n1 | sed -E 's/^Packer v?([0-9]+)\.([0-9]+).*/\1 \2/')
	read -r major minor <<<"$v"
	echo $((major * 1000 + minor))
}

case $action in
validate)
	# Packer 1.6 (Debian 12) predates the plugins block; validate the rest.
	dir=$here/packer
	if (($(packer_major_minor) < 1007)); then
		dir=$(mktemp -d)
		trap 'rm -rf "$dir"' EXIT
		find "$here/packer" -maxdepth 1 -name '*.pkr.hcl' ! -name plugins.pkr.hcl -exec cp {} "$dir/" \;
	fi
	"$PACKER" validate "${vars[@]}" "$dir"
	;;
build)
	(($(packer_major_minor) >= 1007)) || { echo "build.sh: building needs Packer >= 1.7 (packer init)" >&2; exit 1; }
	"$PACKER" init "$here/packer"
	"$PACKER" build -force "${vars[@]}" "$here/packer"
	mkdir -p "$repo/dist"
	out=$repo/dist/onekube-$ONEKUBE_K8S_VERSION.qcow2
	qemu-img convert -c -O qcow2 "$OUTPUT_DIR/image/onekube" "$out"
	rm -rf "$OUTPUT_DIR/context" "$OUTPUT_DIR/context.iso"
	echo "appliance image: $out"
	;;
*)
	echo "usage: $0 [build|validate]" >&2
	exit 2
	;;
esac
