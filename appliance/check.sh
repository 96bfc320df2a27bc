#!/usr/bin/env bash
# What CI can check of the appliance without KVM or the Kubernetes package
# repository (`make appliance-check`):
#   1. shellcheck of every appliance script;
#   2. the Packer recipe: `packer fmt -check` parses every file, and
#      `packer validate` (Debian's Packer 1.6) checks the build through
#      build.sh's own variable wiring, against stand-in inputs;
#   3. `service install` from appliance.sh in a minimal Debian root (the cached
#      debootstrap root of packaging/test.sh) with the real onekube .deb and
#      only the network seams stubbed (test/stubs.sh), then the result;
#   4. that bad inputs and a checksum mismatch fail the install.
# Needs root and the packages in dist/ (`make package`).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=packaging/testlib.sh
. packaging/testlib.sh

need_root
need_tools shellcheck=shellcheck debootstrap=debootstrap packer=packer
work=$(mktemp -d)
root=$work/root
cleanup() {
	if mountpoint -q "$root/proc"; then umount "$root/proc"; fi
	rm -rf "$work"
}
trap cleanup EXIT

stamp "shellcheck"
shellcheck -x appliance/*.sh appliance/test/*.sh appliance/packer/gen_context

stamp "packer fmt -check, packer validate ($(packer version | head -n1))"
packer fmt -check -diff appliance/packer >/dev/null || fail "packer fmt: run 'packer fmt appliance/packer'"
apps=$work/one-apps
mkdir -p "$apps/appliances/lib" "$apps/appliances/scripts"
touch "$apps/appliances/service.sh" "$apps/appliances/lib/common.sh" \
	"$apps/appliances/lib/functions.sh" "$apps/appliances/scripts/net-90-service-appliance" "$work/base.qcow2"
debs=(dist/onekube_*.deb)
[[ ${#debs[@]} == 1 && -f ${debs[0]} ]] || fail "want one dist/onekube_*.deb (make package), found ${#debs[@]}"
ONE_APPS_DIR=$apps BASE_IMAGE=$work/base.qcow2 ONEKUBE_DEB=$PWD/${debs[0]} OUTPUT_DIR=$work/out \
	appliance/build.sh validate 2>&1 | grep -v -e "checksum of 'none'" -e 'checksum is highly recommended' \
	-e 'onekube.pkr.hcl line' -e 'source code not available' -e '^$' || true
[[ ${PIPESTATUS[0]} == 0 ]] || fail "packer validate"

stamp "Debian root"
debian_root "$root" systemd
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
# The one-apps base image carries one-context; the root stands in for it.
printf '#!/bin/sh\nexit 0\n' >"$root/usr/sbin/one-contextd"
chmod 0755 "$root/usr/sbin/one-contextd"
cp "${debs[0]}" "$root/tmp/onekube.deb"
cp appliance/appliance.sh appliance/test/stubs.sh "$root/tmp/"
env_args=()
while IFS='=' read -r key value; do
	[[ $key =~ ^ONEKUBE_[A-Z0-9_]+$ ]] && env_args+=("$key=$value")
done <appliance/versions.env

# in_root CMD: run a bash snippet in the root with appliance.sh, the stubs
# and the pinned versions, errexit on as one-apps' driver runs it.
# shellcheck disable=SC2016 # $ONEKUBE_RUN expands inside the root's bash
in_root() {
	chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		"${env_args[@]}" ONEKUBE_DEB=/tmp/onekube.deb "$@" bash -c \
		'set -e; . /tmp/appliance.sh; . /tmp/stubs.sh; eval "$ONEKUBE_RUN"'
}

stamp "bad input is refused before anything is installed"
if out=$(in_root ONEKUBE_K8S_VERSION=v1.36 ONEKUBE_RUN=service_install 2>&1); then
	fail "service_install accepted ONEKUBE_K8S_VERSION=v1.36"
fi
[[ $out == *"want MAJOR.MINOR.PATCH"* ]] || fail "unclear error for a bad version: $out"

stamp "service install (apt from the Debian mirror, fetches stubbed)"
in_root ONEKUBE_RUN=service_install >"$work/install.log" 2>&1 ||
	{ tail -30 "$work/install.log" >&2; fail "service_install"; }

stamp "checking the installed root"
# want_file PATH MODE: PATH exists in the root with octal MODE.
want_file() {
	[[ -e $root$1 ]] || fail "$1 missing"
	[[ $(stat -c '%a' "$root$1") == "$2" ]] || fail "$1: mode $(stat -c '%a' "$root$1"), want $2"
}
want_file /usr/local/bin/containerd 755
want_file /usr/local/sbin/runc 755
want_file /usr/local/lib/systemd/system/containerd.service 644
want_file /etc/containerd/config.toml 644
grep -Eq "^ *SystemdCgroup = true$" "$root/etc/containerd/config.toml" || fail "containerd: SystemdCgroup not true"
grep -Eq '^ *sandbox = "registry.k8s.io/pause:3.10"$' "$root/etc/containerd/config.toml" || fail "containerd: sandbox image not kubeadm's pause"
grep -q 'br_netfilter' "$root/etc/modules-load.d/onekube.conf" || fail "modules-load: br_netfilter"
grep -q 'net.ipv4.ip_forward = 1' "$root/etc/sysctl.d/90-onekube.conf" || fail "sysctl: ip_forward"
# One manifest per CNI plugin the agent offers (context/keys.go), none for "none".
mapfile -t cnis < <(sed -n 's/^var CNIPlugins = \[\]string{\(.*\)}$/\1/p' context/keys.go | tr -d '" ' | tr ',' '\n' | grep -vx none)
((${#cnis[@]} > 0)) || fail "could not read CNIPlugins from context/keys.go"
for c in "${cnis[@]}"; do
	want_file "/usr/share/onekube/cni/$c.yaml" 644
done
[[ $(find "$root/usr/share/onekube/cni" -type f | wc -l) == "${#cnis[@]}" ]] || fail "unexpected files in /usr/share/onekube/cni"
for u in onekube-bootstrap containerd kubelet; do
	[[ -L $root/etc/systemd/system/multi-user.target.wants/$u.service ]] || fail "$u.service not enabled"
done
# shellcheck disable=SC2016 # a dpkg-query format, not a shell expansion
chroot "$root" dpkg-query -W -f '${Status}' onekube | grep -q 'install ok installed' || fail "onekube package not installed"
# Pre-pulled: kubeadm's list for the pinned version, then the CNI images.
v=$(sed -n 's/^ONEKUBE_K8S_VERSION=//p' appliance/versions.env)
sort >"$work/want-pulls" <<-EOF
	registry.k8s.io/kube-apiserver:v$v
	registry.k8s.io/kube-controller-manager:v$v
	registry.k8s.io/kube-scheduler:v$v
	registry.k8s.io/kube-proxy:v$v
	registry.k8s.io/coredns/coredns:v1.12.1
	registry.k8s.io/pause:3.10
	registry.k8s.io/etcd:3.6.4-0
	ghcr.io/flannel-io/flannel-cni-plugin:v1.7.1-flannel1
	ghcr.io/flannel-io/flannel:v$(sed -n 's/^ONEKUBE_FLANNEL_VERSION=//p' appliance/versions.env)
	docker.io/calico/cni:v$(sed -n 's/^ONEKUBE_CALICO_VERSION=//p' appliance/versions.env)
	docker.io/calico/node:v$(sed -n 's/^ONEKUBE_CALICO_VERSION=//p' appliance/versions.env)
	docker.io/calico/kube-controllers:v$(sed -n 's/^ONEKUBE_CALICO_VERSION=//p' appliance/versions.env)
EOF
sort "$root/var/log/onekube-stub/pull.log" | diff -u "$work/want-pulls" - >&2 || fail "pre-pulled images differ (- want, + got)"
[[ ! -s $root/etc/machine-id ]] || fail "machine-id not emptied"
[[ -z $(find "$root/var/lib/apt/lists" -type f ! -name lock 2>/dev/null) ]] || fail "apt lists left in the image"
[[ ! -e $root/tmp/onekube.deb ]] || fail "onekube.deb left in the image"

stamp "configure and bootstrap hooks"
# In a chroot systemctl cannot restart units; the hook's own logic is what
# runs here (is-enabled reads the links).
# shellcheck disable=SC2016 # the snippet runs in the root's bash
in_root ONEKUBE_RUN='systemctl() { [ "$1" = restart ] || command systemctl "$@"; }; swapoff() { :; }; sysctl() { :; }; service_configure; service_bootstrap' \
	>"$work/boot.log" 2>&1 || { cat "$work/boot.log" >&2; fail "service_configure/bootstrap"; }
grep -q 'will run kubeadm once one-context has finished' "$work/boot.log" || fail "bootstrap hook: $(cat "$work/boot.log")"
chroot "$root" systemctl disable onekube-bootstrap.service >/dev/null 2>&1
if in_root ONEKUBE_RUN='service_bootstrap' >"$work/boot.log" 2>&1; then
	fail "service_bootstrap passed with onekube-bootstrap.service disabled"
fi

stamp "a containerd checksum mismatch fails the install"
if out=$(in_root ONEKUBE_STUB_CORRUPT=1 ONEKUBE_RUN=onekube_containerd 2>&1); then
	fail "onekube_containerd accepted a tarball that does not match its checksum"
fi
[[ $out == *"checksum mismatch"* ]] || fail "unclear checksum error: $out"

stamp "appliance checks passed"
