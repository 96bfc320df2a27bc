# shellcheck shell=bash
# CI stand-ins for appliance.sh's network seams; sourced after appliance.sh
# inside the test root (appliance/check.sh, through test/driver.sh). The rest
# of service_install runs for real: Debian packages come from the Debian
# mirror, the Kubernetes packages from a signed local repository
# (test/k8s-repo.sh) that the real gpg and apt handle, checksums are checked,
# configs are edited, units enabled.
#
# The stand-ins are no more lenient than what they replace: downloads are
# written as curl writes them (mode from the umask, nothing made executable),
# and the artifacts are tiny but shaped like the real ones (a release tarball
# with bin/containerd, a sha256sum file, manifests with image: lines), so the
# steps' parsing and modes are exercised.
# ONEKUBE_STUB_CORRUPT=1 makes the containerd tarball disagree with its
# checksum file. Logs: /var/log/onekube-stub/{fetch,pull,runtime}.log.

# The signed stand-in for pkgs.k8s.io, built by check.sh with test/k8s-repo.sh.
# shellcheck disable=SC2034 # read by appliance.sh's onekube_kube_packages
ONEKUBE_K8S_REPO=file:///srv/onekube-k8s-repo

ONEKUBE_STUB_LOG=/var/log/onekube-stub
install -d -m 0755 "$ONEKUBE_STUB_LOG"

# stub_script PATH BODY: a shell script at PATH, with the umask's mode as a
# download has.
stub_script() {
	printf '#!/bin/sh\n%s\n' "$2" >"$1"
}

onekube_fetch() {
	local url=$1 dest=$2 dir
	dir=$(dirname "$dest")
	echo "$url" >>"$ONEKUBE_STUB_LOG/fetch.log"
	case $url in
	file://*)
		curl -fsSL -o "$dest" "$url"
		;;
	*/containerd-*-linux-*.tar.gz)
		local tree
		tree=$(mktemp -d)
		# As in the release tarball: bin/ and its files 0755, owned by root.
		install -d -m 0755 "$tree/bin"
		# containerd 2.x prints TOML with single quotes; the step must cope.
		stub_script "$tree/bin/containerd" "[ \"\$1 \$2\" = 'config default' ] || exit 1
cat <<'TOML'
version = 3
[plugins.'io.containerd.cri.v1.images'.pinned_images]
  sandbox = 'registry.k8s.io/pause:3.10'
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
  SystemdCgroup = false
TOML"
		stub_script "$tree/bin/ctr" 'exit 0'
		chmod 0755 "$tree"/bin/*
		tar -C "$tree" --owner=0 --group=0 -czf "$dest" bin
		rm -rf "$tree"
		;;
	*.tar.gz.sha256sum)
		local tgz
		tgz=$(basename "$url" .sha256sum)
		(cd "$dir" && sha256sum "$tgz") >"$dest"
		if [[ ${ONEKUBE_STUB_CORRUPT:-} == 1 ]]; then
			echo garbage >>"$dir/$tgz"
		fi
		;;
	*/containerd.service)
		printf '[Unit]\nDescription=containerd (stub)\n[Service]\nExecStart=/usr/local/bin/containerd\n[Install]\nWantedBy=multi-user.target\n' >"$dest"
		;;
	*/runc.amd64 | */runc.arm64)
		stub_script "$dest" 'echo "runc version stub"'
		;;
	*/runc.sha256sum)
		(cd "$dir" && sha256sum runc.*) >"$dest"
		;;
	*/kube-flannel.yml)
		cat >"$dest" <<-EOF
			apiVersion: v1
			kind: Namespace
			metadata:
			  name: kube-flannel
			---
			kind: DaemonSet
			spec:
			  template:
			    spec:
			      initContainers:
			      - name: install-cni-plugin
			        image: ghcr.io/flannel-io/flannel-cni-plugin:v1.7.1-flannel1
			      containers:
			      - name: kube-flannel
			        image: ghcr.io/flannel-io/flannel:v$ONEKUBE_FLANNEL_VERSION
		EOF
		;;
	*/manifests/calico.yaml)
		cat >"$dest" <<-EOF
			kind: DaemonSet
			spec:
			  template:
			    spec:
			      initContainers:
			        - name: install-cni
			          image: docker.io/calico/cni:v$ONEKUBE_CALICO_VERSION
			      containers:
			        - name: calico-node
			          image: "docker.io/calico/node:v$ONEKUBE_CALICO_VERSION"
			---
			kind: Deployment
			spec:
			  template:
			    spec:
			      containers:
			        - name: calico-kube-controllers
			          image: docker.io/calico/kube-controllers:v$ONEKUBE_CALICO_VERSION
		EOF
		;;
	*)
		echo "stub onekube_fetch: no stand-in for $url; add one to appliance/test/stubs.sh" >&2
		return 1
		;;
	esac
}

# As strict as ctr, which does not expand short names (no docker.io
# default): the first component must name a registry.
onekube_image_pull() {
	local host=${1%%/*}
	if [[ $1 != */* || ($host != *.* && $host != *:* && $host != localhost) ]]; then
		echo "ctr: failed to resolve reference \"$1\": no registry host" >&2
		return 1
	fi
	echo "$1" >>"$ONEKUBE_STUB_LOG/pull.log"
}

# A chroot has no running systemd; record that the runtime was asked for.
onekube_start_runtime() {
	echo "start containerd" >>"$ONEKUBE_STUB_LOG/runtime.log"
}
