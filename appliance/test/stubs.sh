# shellcheck shell=bash
# CI stand-ins for appliance.sh's network seams; sourced after appliance.sh
# inside the test root (appliance/check.sh). Everything else in
# service_install runs for real: Debian packages come from the Debian mirror,
# checksums are checked, configs are edited, units enabled.
#
# The artifacts are tiny but shaped like the real ones (a release tarball with
# bin/containerd, a sha256sum file, manifests with image: lines, a kubeadm that
# answers `config images list`), so the steps' parsing is exercised.
# ONEKUBE_STUB_CORRUPT=1 makes the containerd tarball disagree with its
# checksum file. Logs: /var/log/onekube-stub/{fetch,pull,apt}.log.

ONEKUBE_STUB_LOG=/var/log/onekube-stub
mkdir -p "$ONEKUBE_STUB_LOG"

# stub_script PATH BODY: an executable shell script at PATH.
stub_script() {
	install -d "$(dirname "$1")"
	printf '#!/bin/sh\n%s\n' "$2" >"$1"
	chmod 0755 "$1"
}

onekube_fetch() {
	local url=$1 dest=$2 dir
	dir=$(dirname "$dest")
	echo "$url" >>"$ONEKUBE_STUB_LOG/fetch.log"
	case $url in
	*/containerd-*-linux-*.tar.gz)
		local tree
		tree=$(mktemp -d)
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
		tar -C "$tree" -czf "$dest" bin
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

# The repository step for real would reach pkgs.k8s.io; the stand-in installs
# binaries that behave like this kubeadm for what the install steps ask.
onekube_kube_packages() {
	local v=v$ONEKUBE_K8S_VERSION
	echo "kubelet kubeadm kubectl $ONEKUBE_K8S_VERSION" >>"$ONEKUBE_STUB_LOG/apt.log"
	stub_script /usr/bin/kubeadm "case \"\$1 \$2 \$3\" in
'config images list') ;;
*) echo \"kubeadm stub: \$*\" >&2; exit 1 ;;
esac
[ \"\$4 \$5\" = '--kubernetes-version $v' ] || { echo 'kubeadm stub: want --kubernetes-version $v' >&2; exit 1; }
for i in kube-apiserver:$v kube-controller-manager:$v kube-scheduler:$v kube-proxy:$v coredns/coredns:v1.12.1 pause:3.10 etcd:3.6.4-0; do
	echo registry.k8s.io/\$i
done"
	stub_script /usr/bin/kubelet 'exit 0'
	stub_script /usr/bin/kubectl 'exit 0'
	install -d /usr/lib/systemd/system
	printf '[Unit]\nDescription=kubelet (stub)\n[Service]\nExecStart=/usr/bin/kubelet\n[Install]\nWantedBy=multi-user.target\n' \
		>/usr/lib/systemd/system/kubelet.service
}

onekube_image_pull() {
	echo "$1" >>"$ONEKUBE_STUB_LOG/pull.log"
}

# A chroot has no running systemd; record that the runtime was asked for.
onekube_start_runtime() {
	echo "start containerd" >>"$ONEKUBE_STUB_LOG/apt.log"
}
