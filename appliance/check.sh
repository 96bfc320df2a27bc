#!/usr/bin/env bash
# What CI can check of the appliance without KVM or the Kubernetes package
# repository (`make appliance-check`):
#   1. shellcheck of every appliance script;
#   2. the Packer recipe: `packer fmt -check` parses every file, and
#      `packer validate` (Debian's Packer 1.6) checks the build through
#      build.sh's own variable wiring, against stand-in inputs;
#   3. `service install` in a minimal Debian root (the cached debootstrap root
#      of packaging/test.sh) holding what the build VM holds (a hostname and
#      an SSH drop-in from the build context), run as one-apps'
#      driver runs it (test/driver.sh: errexit, umask 0077), with the real
#      onekube .deb, the real gpg and apt against a signed stand-in of
#      pkgs.k8s.io (test/k8s-repo.sh), and only downloads stubbed
#      (test/stubs.sh); then the result (test/inspect.sh): files, modes,
#      versions, and the seal;
#   4. that the stand-in repository is as strict as the real one: with a
#      keyring _apt cannot read, apt-get update fails;
#   5. the configure and bootstrap hooks, and that bad inputs and a checksum
#      mismatch fail the install;
#   6. the upgrade bundle (bundle.sh) built offline from stand-ins: label,
#      layout, manifest sums, refusals (test/bundle.sh, about 1 s).
# Needs root and the packages in dist/ (`make package`).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=packaging/testlib.sh
. packaging/testlib.sh

need_root
need_tools shellcheck=shellcheck debootstrap=debootstrap packer=packer gpg=gnupg dpkg-scanpackages=dpkg-dev
work=$(mktemp -d)
root=$work/root
cleanup() {
	if mountpoint -q "$root/proc"; then umount "$root/proc"; fi
	rm -rf "$work"
}
trap cleanup EXIT

stamp "shellcheck"
shellcheck -x appliance/*.sh appliance/test/*.sh appliance/packer/gen_context

stamp "upgrade bundle, built offline (appliance/test/bundle.sh)"
appliance/test/bundle.sh

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

stamp "Debian root, signed stand-in of pkgs.k8s.io"
debian_root "$root" systemd
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
k8s_version=$(sed -n 's/^ONEKUBE_K8S_VERSION=//p' appliance/versions.env)
appliance/test/k8s-repo.sh "$root/srv/onekube-k8s-repo" "$k8s_version" "$(dpkg --print-architecture)"
# The one-apps base image carries one-context; the root stands in for it.
printf '#!/bin/sh\nexit 0\n' >"$root/usr/sbin/one-contextd"
chmod 0755 "$root/usr/sbin/one-contextd"
# Laid out as the Packer recipe lays it out, with the driver stand-in in
# place of one-apps' service.sh.
install -d -m 0750 "$root/etc/one-appliance" "$root/etc/one-appliance/service.d"
install -m 0750 appliance/test/driver.sh "$root/etc/one-appliance/service"
install -m 0644 appliance/appliance.sh "$root/etc/one-appliance/service.d/appliance.sh"
cp "${debs[0]}" "$root/tmp/onekube.deb"
cp appliance/test/stubs.sh "$root/tmp/"
env_args=()
while IFS='=' read -r key value; do
	[[ $key =~ ^ONEKUBE_[A-Z0-9_]+$ ]] && env_args+=("$key=$value")
done <appliance/versions.env

# What the build VM holds before `service install`: the hostname and
# /etc/hosts entry one-context made from packer/gen_context's SET_HOSTNAME
# (net-15-hostname tags its line "# one-contextd"), the password-login sshd
# drop-in, and an identity of its own.
# (minbase has no /etc/hosts; Debian's netbase ships the first two lines.)
echo onekube-build >"$root/etc/hostname"
printf '127.0.0.1 onekube-build  # one-contextd\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\tonekube-build\n' \
	>"$root/etc/hosts"
echo 0123456789abcdef0123456789abcdef >"$root/etc/machine-id"
install -d -m 0755 "$root/etc/ssh/sshd_config.d" "$root/var/lib/dbus"
printf 'PermitRootLogin yes\nPasswordAuthentication yes\n' >"$root/etc/ssh/sshd_config.d/00-onekube-build.conf"
touch "$root/etc/ssh/ssh_host_ed25519_key" "$root/etc/ssh/ssh_host_ed25519_key.pub" "$root/var/lib/dbus/machine-id"

# in_root [VAR=VALUE...] ARGS...: the driver stand-in in the root with the
# stubs and the pinned versions, as Packer's shell provisioner runs
# `/etc/one-appliance/service install` (the driver sets its own umask).
in_root() {
	local vars=()
	while [[ $1 == *=* ]]; do
		vars+=("$1")
		shift
	done
	chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		"${env_args[@]}" ONEKUBE_DEB=/tmp/onekube.deb ONEKUBE_STUBS=/tmp/stubs.sh "${vars[@]}" \
		/etc/one-appliance/service "$@"
}

stamp "bad input is refused before anything is installed"
if out=$(in_root ONEKUBE_K8S_VERSION=v1.36 install 2>&1); then
	fail "service install accepted ONEKUBE_K8S_VERSION=v1.36"
fi
[[ $out == *"want MAJOR.MINOR.PATCH"* ]] || fail "unclear error for a bad version: $out"

stamp "service install under the driver's umask 0077 (real apt and gpg, downloads stubbed)"
touch "$work/before-install"
sleep 1 # find -newer: let every file the install writes be strictly newer
in_root install >"$work/install.log" 2>&1 ||
	{ tail -30 "$work/install.log" >&2; fail "service install"; }

# shellcheck source=appliance/test/inspect.sh
. appliance/test/inspect.sh
stamp "checking the installed root"
inspect_install "$k8s_version"
stamp "everything the install wrote that others read is readable by them"
inspect_modes "$work/before-install"
stamp "checking the seal: nothing of the build VM's identity left"
inspect_seal onekube-build

stamp "the stand-in repository refuses a keyring _apt cannot read, as pkgs.k8s.io does"
keyring=$root/etc/apt/keyrings/kubernetes-apt-keyring.gpg
k8s_only=(-o Dir::Etc::sourcelist=/etc/apt/sources.list.d/kubernetes.list -o Dir::Etc::sourceparts=-)
chmod 0600 "$keyring"
if out=$(chroot "$root" apt-get update "${k8s_only[@]}" 2>&1); then
	fail "apt-get update passed with a 0600 keyring"
fi
[[ $out == *NO_PUBKEY*"is not signed"* ]] || fail "apt-get update with a 0600 keyring: $out"
chmod 0644 "$keyring"
chroot "$root" apt-get update -qq "${k8s_only[@]}" || fail "apt-get update with the keyring readable again"
rm -rf "${root:?}/var/lib/apt/lists/"*

stamp "configure and bootstrap hooks"
# In a chroot systemctl cannot restart units; the hook's own logic is what
# runs here (is-enabled reads the links).
# shellcheck disable=SC2016 # the snippet runs in the root's bash
in_root eval 'systemctl() { [ "$1" = restart ] || command systemctl "$@"; }; swapoff() { :; }; sysctl() { :; }; service_configure; service_bootstrap' \
	>"$work/boot.log" 2>&1 || { cat "$work/boot.log" >&2; fail "service configure/bootstrap"; }
grep -q 'will run kubeadm once one-context has finished' "$work/boot.log" || fail "bootstrap hook: $(cat "$work/boot.log")"
chroot "$root" systemctl disable onekube-bootstrap.service >/dev/null 2>&1
if in_root bootstrap >"$work/boot.log" 2>&1; then
	fail "service bootstrap passed with onekube-bootstrap.service disabled"
fi

stamp "a containerd checksum mismatch fails the install"
if out=$(in_root ONEKUBE_STUB_CORRUPT=1 eval onekube_containerd 2>&1); then
	fail "onekube_containerd accepted a tarball that does not match its checksum"
fi
[[ $out == *"checksum mismatch"* ]] || fail "unclear checksum error: $out"

stamp "appliance checks passed"
