#!/usr/bin/env bash
# Builds a stand-in for the Kubernetes package repository (pkgs.k8s.io) that
# apt treats exactly as it treats the real one: a flat repository
# (`deb [signed-by=KEYRING] URI /`) with an InRelease signed by its own key,
# whose armored public key is served as Release.key. `service install` then
# runs its real gpg --dearmor, writes the real keyring and .list file, and the
# real apt-get update verifies the signature as the _apt user, so a keyring
# that user cannot read fails here as it fails in the Packer build.
#
#   k8s-repo.sh DIR K8S_VERSION ARCH
#
# makes DIR/v<minor>/deb/ with kubelet, kubeadm and kubectl at K8S_VERSION and
# at the patch releases either side (so the version pin is exercised), plus
# the cri-tools and kubernetes-cni packages kubeadm depends on. The binaries
# are shell stand-ins; kubeadm answers `config images list` for its version.
# Needs gpg, dpkg-deb and dpkg-scanpackages.
set -euo pipefail
dir=$1 version=$2 arch=$3
[[ $version =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] || { echo "k8s-repo.sh: bad version $version" >&2; exit 2; }
minor=${BASH_REMATCH[1]}.${BASH_REMATCH[2]}
patch=${BASH_REMATCH[3]}
repo=$dir/v$minor/deb
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
umask 0022
mkdir -p "$repo/pool"

# deb NAME VERSION DEPENDS: builds $work/NAME from the files placed there.
deb() {
	local name=$1 ver=$2 deps=$3 tree=$work/$1
	mkdir -p "$tree/DEBIAN"
	{
		printf 'Package: %s\nVersion: %s\nArchitecture: %s\n' "$name" "$ver" "$arch"
		printf 'Maintainer: onekube tests <tests@onekube.invalid>\n'
		[[ -z $deps ]] || printf 'Depends: %s\n' "$deps"
		printf 'Description: stand-in for the %s package of pkgs.k8s.io\n' "$name"
	} >"$tree/DEBIAN/control"
	find "$tree" -type d -exec chmod 0755 {} +
	dpkg-deb --root-owner-group -Zgzip -b "$tree" "$repo/pool/${name}_${ver}_$arch.deb" >/dev/null
	rm -rf "$tree"
}

# put PATH MODE CONTENT: a file in the package tree being built.
put() {
	install -d "$(dirname "$1")"
	printf '%s\n' "$3" >"$1"
	chmod "$2" "$1"
}

put "$work/cri-tools/usr/bin/crictl" 0755 '#!/bin/sh
exit 0'
deb cri-tools "$minor.0-1.1" ""
put "$work/kubernetes-cni/opt/cni/bin/loopback" 0755 '#!/bin/sh
exit 0'
deb kubernetes-cni 1.7.1-1.1 ""

for p in $((patch > 0 ? patch - 1 : patch)) "$patch" $((patch + 1)); do
	v=$minor.$p
	put "$work/kubelet/usr/bin/kubelet" 0755 '#!/bin/sh
exit 0'
	put "$work/kubelet/usr/lib/systemd/system/kubelet.service" 0644 '[Unit]
Description=kubelet: The Kubernetes Node Agent (stand-in)
[Service]
ExecStart=/usr/bin/kubelet
[Install]
WantedBy=multi-user.target'
	deb kubelet "$v-1.1" "iptables, iproute2, mount, kubernetes-cni (>= 1.2.0)"
	put "$work/kubectl/usr/bin/kubectl" 0755 '#!/bin/sh
exit 0'
	deb kubectl "$v-1.1" ""
	# The kubeadm stand-in refuses anything but what the install asks.
	put "$work/kubeadm/usr/bin/kubeadm" 0755 "#!/bin/sh
[ \"\$1 \$2 \$3\" = 'config images list' ] || { echo \"kubeadm stand-in: \$*\" >&2; exit 1; }
[ \"\$4 \$5\" = '--kubernetes-version v$v' ] || { echo 'kubeadm stand-in $v: want --kubernetes-version v$v' >&2; exit 1; }
for i in kube-apiserver:v$v kube-controller-manager:v$v kube-scheduler:v$v kube-proxy:v$v coredns/coredns:v1.12.1 pause:3.10 etcd:3.6.4-0; do
	echo registry.k8s.io/\$i
done"
	# shellcheck disable=SC2016 # systemd expands $KUBELET_KUBEADM_ARGS
	put "$work/kubeadm/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf" 0644 '[Service]
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBEADM_ARGS'
	deb kubeadm "$v-1.1" "kubelet (>= $minor.0), kubectl (>= $minor.0), kubernetes-cni (>= 1.2.0), cri-tools (>= $minor.0)"
done

(cd "$repo" && dpkg-scanpackages --multiversion pool /dev/null 2>/dev/null >Packages && gzip -9kn Packages)

# The signing key lives only as long as this script.
export GNUPGHOME=$work/gnupg
install -d -m 0700 "$GNUPGHOME"
gpg --batch --quiet --passphrase '' --quick-gen-key 'onekube test repository <repo@onekube.invalid>' ed25519 sign 1d 2>/dev/null
gpg --batch --quiet --armor --export >"$repo/Release.key"
{
	printf 'Origin: onekube-test\nLabel: onekube-test\nSuite: stable\nArchitectures: %s\n' "$arch"
	printf 'Date: %s\nSHA256:\n' "$(LC_ALL=C date -u -R)"
	for f in Packages Packages.gz; do
		printf ' %s %s %s\n' "$(sha256sum "$repo/$f" | cut -d' ' -f1)" "$(stat -c %s "$repo/$f")" "$f"
	done
} >"$repo/Release"
gpg --batch --quiet --yes --clearsign -o "$repo/InRelease" "$repo/Release"
gpg --batch --quiet --yes --armor --detach-sign -o "$repo/Release.gpg" "$repo/Release"
