# shellcheck shell=bash
# shellcheck disable=SC2034 # ONE_SERVICE_* are read by the one-apps driver that sources this file
# onekube service appliance: a Debian image that becomes a kubeadm node of a
# OneFlow service. It plugs into one-apps' service-appliance driver
# (/etc/one-appliance/service, from OpenNebula/one-apps appliances/service.sh),
# which sources this file as service.d/appliance.sh and calls:
#
#   service install     at image build time (Packer), with the ONEKUBE_*
#                       versions below in the environment
#   service configure   at every boot, from one-context (net-90-service-appliance)
#   service bootstrap   right after configure
#
# The Kubernetes work itself is not done here: onekube-bootstrap.service runs
# `onekube-agent bootstrap` after one-context has finished (see its unit), so
# configure and bootstrap only prepare the host and check the hand-over. The
# agent reports READY=YES through OneGate itself; the VM templates must not
# set REPORT_READY (onekube-flow never does).
#
# Every network fetch goes through onekube_fetch, onekube_kube_packages and
# onekube_image_pull, and the one step that needs a running systemd through
# onekube_start_runtime, so CI replaces just those (appliance/test/stubs.sh).

# Pinned inputs (appliance/versions.env, passed by Packer). Checked by
# onekube_check_inputs before anything is installed.
ONEKUBE_K8S_VERSION=${ONEKUBE_K8S_VERSION:-}
ONEKUBE_CONTAINERD_VERSION=${ONEKUBE_CONTAINERD_VERSION:-}
ONEKUBE_RUNC_VERSION=${ONEKUBE_RUNC_VERSION:-}
ONEKUBE_FLANNEL_VERSION=${ONEKUBE_FLANNEL_VERSION:-}
ONEKUBE_CALICO_VERSION=${ONEKUBE_CALICO_VERSION:-}
# The onekube .deb copied into the build VM, and an optional one-context .deb
# for base images that lack it.
ONEKUBE_DEB=${ONEKUBE_DEB:-/tmp/onekube.deb}
ONEKUBE_ONE_CONTEXT_DEB=${ONEKUBE_ONE_CONTEXT_DEB:-}
ONEKUBE_ARCH=${ONEKUBE_ARCH:-amd64}
ONEKUBE_CNI_DIR=/usr/share/onekube/cni
ONEKUBE_CRI_SOCKET=unix:///run/containerd/containerd.sock

ONE_SERVICE_NAME='Service onekube - Kubernetes (kubeadm) for OneFlow'
ONE_SERVICE_VERSION="${ONEKUBE_K8S_VERSION:-unset}"
ONE_SERVICE_BUILD=$(date +%s)
ONE_SERVICE_SHORT_DESCRIPTION='Debian image with kubeadm, containerd and onekube for OneFlow Kubernetes clusters'
ONE_SERVICE_DESCRIPTION='Each VM joins the Kubernetes cluster of its OneFlow service at first boot:
the master runs kubeadm init and publishes its join data through OneGate, the
workers wait for it and run kubeadm join. The control-plane images and the
CNI manifests are in the image, so no registry is needed at boot.
Follow a VM with "systemctl status onekube-bootstrap" and "onekube-agent status".'
# A reconfigure (new context) must not rerun kubeadm; the agent's sentinel
# already prevents that, and configure is idempotent.
ONE_SERVICE_RECONFIGURABLE=true

# Context inputs: name, stage, description, input type. Generated from
# flow.UserInputs by `make marketplace`; do not edit between the markers.
# BEGIN GENERATED ONE_SERVICE_PARAMS
ONE_SERVICE_PARAMS=(
    'ONEAPP_K8S_VERSION'          'bootstrap' 'Kubernetes version, e.g. v1.36.3 (empty: the version of the image'"'"'s kubeadm)' 'O|text'
    'ONEAPP_K8S_CNI_PLUGIN'       'bootstrap' 'CNI plugin' 'O|list'
    'ONEAPP_K8S_PODS_NETWORK'     'bootstrap' 'Pod network CIDR' 'O|text'
    'ONEAPP_K8S_SERVICES_NETWORK' 'bootstrap' 'Service network CIDR' 'O|text'
    'ONEAPP_K8S_PORT'             'bootstrap' 'Kubernetes API server port' 'O|number'
    'ONEAPP_K8S_ADDRESS'          'bootstrap' 'API server advertise address: IP, CIDR or network name (empty: the first NIC'"'"'s IP)' 'O|text'
    'ONEAPP_K8S_NODENAME'         'bootstrap' 'Node name (empty: the VM'"'"'s hostname; leave empty with more than one VM)' 'O|text'
    'ONEAPP_K8S_TAINTED_MASTER'   'bootstrap' 'Keep the control-plane taint: no workloads on masters' 'O|boolean'
    'ONEAPP_K8S_TOKEN_TTL'        'bootstrap' 'Bootstrap token lifetime (Go duration, e.g. 24h)' 'O|text'
)
# END GENERATED ONE_SERVICE_PARAMS

onekube_log() {
	echo "onekube-appliance: $*" >&2
}

onekube_die() {
	onekube_log "ERROR: $*"
	return 1
}

# --- network seams (replaced in CI) -------------------------------------------

# onekube_fetch URL DEST: download URL to DEST, retrying transient failures.
onekube_fetch() {
	curl -fsSL --retry 5 --retry-delay 3 --connect-timeout 20 -o "$2" "$1"
}

# onekube_kube_packages: kubelet, kubeadm and kubectl at ONEKUBE_K8S_VERSION
# from pkgs.k8s.io (the repository for that minor release), held there.
onekube_kube_packages() {
	local minor=${ONEKUBE_K8S_VERSION%.*}
	local repo="https://pkgs.k8s.io/core:/stable:/v${minor}/deb/"
	install -d -m 0755 /etc/apt/keyrings
	onekube_fetch "${repo}Release.key" /tmp/kubernetes-release.key
	gpg --batch --yes --dearmor -o /etc/apt/keyrings/kubernetes-apt-keyring.gpg /tmp/kubernetes-release.key
	rm -f /tmp/kubernetes-release.key
	echo "deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] ${repo} /" \
		>/etc/apt/sources.list.d/kubernetes.list
	apt-get update -qq
	local pkgs=() p
	for p in kubelet kubeadm kubectl; do
		pkgs+=("$p=${ONEKUBE_K8S_VERSION}-*")
	done
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}"
	apt-mark hold kubelet kubeadm kubectl
}

# onekube_image_pull IMAGE: pull IMAGE into containerd's k8s.io namespace,
# where kubelet looks for it.
onekube_image_pull() {
	ctr --namespace k8s.io images pull "$1" >/dev/null
}

# onekube_start_runtime: containerd up for the pre-pull (the build VM runs
# systemd; the CI root does not, so this is a seam too).
onekube_start_runtime() {
	local i
	systemctl daemon-reload
	systemctl start containerd.service
	for ((i = 0; i < 30; i++)); do
		ctr version >/dev/null 2>&1 && return 0
		sleep 1
	done
	onekube_die "containerd did not answer on its socket within 30s"
}

# --- install steps --------------------------------------------------------------

onekube_check_inputs() {
	local v
	[[ $ONEKUBE_K8S_VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
		onekube_die "ONEKUBE_K8S_VERSION='$ONEKUBE_K8S_VERSION': want MAJOR.MINOR.PATCH, e.g. 1.36.3" || return
	for v in ONEKUBE_CONTAINERD_VERSION ONEKUBE_RUNC_VERSION ONEKUBE_FLANNEL_VERSION ONEKUBE_CALICO_VERSION; do
		[[ ${!v} =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
			onekube_die "$v='${!v}': want MAJOR.MINOR.PATCH without a leading v" || return
	done
	[[ -f $ONEKUBE_DEB ]] || onekube_die "ONEKUBE_DEB: $ONEKUBE_DEB not found (copy the onekube .deb into the VM)"
}

# onekube_host_packages: what kubeadm preflight and the steps below need,
# from the image's own Debian mirror.
onekube_host_packages() {
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		ca-certificates curl gnupg iptables conntrack ethtool socat ebtables iproute2 kmod procps
}

# onekube_containerd: containerd and runc from their upstream release
# binaries, checksummed. Debian's containerd is older than what current
# Kubernetes supports, and the release binaries are static.
onekube_containerd() {
	local v=$ONEKUBE_CONTAINERD_VERSION tmp
	local base="https://github.com/containerd/containerd/releases/download/v$v"
	local tgz="containerd-$v-linux-$ONEKUBE_ARCH.tar.gz"
	tmp=$(mktemp -d)
	onekube_fetch "$base/$tgz" "$tmp/$tgz"
	onekube_fetch "$base/$tgz.sha256sum" "$tmp/$tgz.sha256sum"
	(cd "$tmp" && sha256sum --check --quiet "$tgz.sha256sum") || onekube_die "$tgz: checksum mismatch" || return
	tar -C /usr/local -xzf "$tmp/$tgz"
	onekube_fetch "https://raw.githubusercontent.com/containerd/containerd/v$v/containerd.service" "$tmp/containerd.service"
	install -D -m 0644 "$tmp/containerd.service" /usr/local/lib/systemd/system/containerd.service

	local r=$ONEKUBE_RUNC_VERSION
	local rbase="https://github.com/opencontainers/runc/releases/download/v$r"
	onekube_fetch "$rbase/runc.$ONEKUBE_ARCH" "$tmp/runc.$ONEKUBE_ARCH"
	onekube_fetch "$rbase/runc.sha256sum" "$tmp/runc.sha256sum"
	(cd "$tmp" && grep " runc.$ONEKUBE_ARCH\$" runc.sha256sum | sha256sum --check --quiet) ||
		onekube_die "runc.$ONEKUBE_ARCH: checksum mismatch" || return
	install -m 0755 "$tmp/runc.$ONEKUBE_ARCH" /usr/local/sbin/runc
	rm -rf "$tmp"
}

# onekube_containerd_config: kubelet uses the systemd cgroup driver on
# systemd hosts, so runc must too; the sandbox (pause) image is the one this
# kubeadm pre-pulls, or containerd would fetch its own default at boot.
onekube_containerd_config() {
	local pause
	pause=$(kubeadm config images list --kubernetes-version "v$ONEKUBE_K8S_VERSION" 2>/dev/null | grep '/pause:' | head -n1)
	[[ -n $pause ]] || onekube_die "kubeadm lists no pause image for v$ONEKUBE_K8S_VERSION" || return
	install -d -m 0755 /etc/containerd
	containerd config default >/etc/containerd/config.toml
	sed -i -E \
		-e 's/^([[:space:]]*SystemdCgroup[[:space:]]*=).*/\1 true/' \
		-e "s#^([[:space:]]*(sandbox_image|sandbox)[[:space:]]*=).*#\\1 \"$pause\"#" \
		/etc/containerd/config.toml
	grep -Eq '^[[:space:]]*SystemdCgroup[[:space:]]*=[[:space:]]*true' /etc/containerd/config.toml ||
		onekube_die "containerd config: no SystemdCgroup option to set" || return
	grep -Fq "\"$pause\"" /etc/containerd/config.toml ||
		onekube_die "containerd config: no sandbox image option to set" || return
	printf 'runtime-endpoint: %s\nimage-endpoint: %s\n' "$ONEKUBE_CRI_SOCKET" "$ONEKUBE_CRI_SOCKET" >/etc/crictl.yaml
}

# onekube_host_config: kernel modules and sysctls kubeadm preflight checks,
# no swap (kubelet refuses it by default).
onekube_host_config() {
	printf 'overlay\nbr_netfilter\n' >/etc/modules-load.d/onekube.conf
	cat >/etc/sysctl.d/90-onekube.conf <<-'EOF'
		net.bridge.bridge-nf-call-iptables = 1
		net.bridge.bridge-nf-call-ip6tables = 1
		net.ipv4.ip_forward = 1
	EOF
	if [[ -f /etc/fstab ]]; then
		sed -i -E 's/^([^#].*[[:space:]]swap[[:space:]].*)$/# onekube: kubelet needs swap off: \1/' /etc/fstab
	fi
}

# onekube_cni_manifests: the manifests the agent applies, one per plugin in
# context.CNIPlugins, named <plugin>.yaml.
onekube_cni_manifests() {
	install -d -m 0755 "$ONEKUBE_CNI_DIR"
	onekube_fetch "https://github.com/flannel-io/flannel/releases/download/v$ONEKUBE_FLANNEL_VERSION/kube-flannel.yml" \
		"$ONEKUBE_CNI_DIR/flannel.yaml"
	onekube_fetch "https://raw.githubusercontent.com/projectcalico/calico/v$ONEKUBE_CALICO_VERSION/manifests/calico.yaml" \
		"$ONEKUBE_CNI_DIR/calico.yaml"
	chmod 0644 "$ONEKUBE_CNI_DIR"/*.yaml
	local f
	for f in "$ONEKUBE_CNI_DIR"/*.yaml; do
		grep -q '^kind:' "$f" || onekube_die "$f does not look like a Kubernetes manifest" || return
	done
}

# onekube_images: the list of images a cluster needs offline: kubeadm's
# control-plane images for the pinned version, then every image the CNI
# manifests reference.
onekube_images() {
	kubeadm config images list --kubernetes-version "v$ONEKUBE_K8S_VERSION"
	sed -n -E 's/^[[:space:]-]*image:[[:space:]]*"?([^"[:space:]]+)"?.*/\1/p' "$ONEKUBE_CNI_DIR"/*.yaml
}

onekube_prepull() {
	local images img
	onekube_start_runtime
	mapfile -t images < <(onekube_images | sort -u)
	((${#images[@]} > 0)) || onekube_die "no images to pre-pull" || return
	for img in "${images[@]}"; do
		onekube_log "pulling $img"
		onekube_image_pull "$img"
	done
}

# onekube_one_context: the image must carry one-context (one-apps
# context-linux): it mounts the context CD and runs the service hooks.
onekube_one_context() {
	if [[ -n $ONEKUBE_ONE_CONTEXT_DEB ]]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$ONEKUBE_ONE_CONTEXT_DEB"
	fi
	command -v one-contextd >/dev/null 2>&1 || [[ -x /usr/sbin/one-contextd ]] ||
		onekube_die "one-context is not installed: use a one-apps base image or set ONEKUBE_ONE_CONTEXT_DEB"
}

onekube_install_package() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$ONEKUBE_DEB"
	systemctl enable containerd.service kubelet.service onekube-bootstrap.service
}

# onekube_cleanup: every clone must get its own machine-id (kubelet and
# kubeadm key node identity on it) and SSH host keys.
onekube_cleanup() {
	apt-get clean
	rm -rf /var/lib/apt/lists/* /tmp/onekube.deb
	rm -f /etc/ssh/ssh_host_*
	: >/etc/machine-id
	rm -f /var/lib/dbus/machine-id
}

# --- one-apps service entry points ---------------------------------------------

service_install() {
	onekube_check_inputs
	onekube_host_packages
	onekube_one_context
	onekube_containerd
	onekube_kube_packages
	onekube_containerd_config
	onekube_host_config
	onekube_cni_manifests
	onekube_install_package
	onekube_prepull
	onekube_cleanup
	onekube_log "install done: Kubernetes v$ONEKUBE_K8S_VERSION"
}

# service_configure runs at every boot: one-context may have turned on a swap
# disk (loc-14-mount-swap), and modules/sysctls must hold before kubelet.
service_configure() {
	swapoff -a
	systemctl restart systemd-modules-load.service
	sysctl --quiet --system
}

# service_bootstrap hands over to onekube-bootstrap.service, which starts
# once one-context.service (running this) has finished.
service_bootstrap() {
	systemctl is-enabled --quiet onekube-bootstrap.service ||
		onekube_die "onekube-bootstrap.service is not enabled: this VM will not join a cluster" || return
	if [[ -e /var/lib/onekube/bootstrap.done ]]; then
		onekube_log "this VM already bootstrapped; onekube-agent status shows its state"
	else
		onekube_log "onekube-bootstrap.service will run kubeadm once one-context has finished"
	fi
}

service_cleanup() {
	:
}

service_help() {
	cat <<-EOF
		$ONE_SERVICE_NAME

		$ONE_SERVICE_DESCRIPTION

		Context inputs (read by onekube-agent):
	EOF
	local i
	for ((i = 0; i < ${#ONE_SERVICE_PARAMS[@]}; i += 4)); do
		printf '  %-28s %s\n' "${ONE_SERVICE_PARAMS[i]}" "${ONE_SERVICE_PARAMS[i + 2]}"
	done
}
