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
# set REPORT_READY (onekube-flow never does). What runs afterwards, the
# local API balancer, serve on masters and leave at shutdown, is onekubed
# (onekube-lb, onekube-serve and onekube-node.service).
#
# Every download goes through onekube_fetch and onekube_image_pull, the
# Kubernetes packages come from ONEKUBE_K8S_REPO, and the one step that needs
# a running systemd goes through onekube_start_runtime, so CI replaces just
# those (appliance/test/stubs.sh, test/k8s-repo.sh).
#
# The driver runs every stage under `set -e` and `umask 0077` (one-apps
# appliances/service.sh), so anything written with a plain redirect, gpg -o,
# mkdir or tar is root-only. Every file and directory that another user or
# daemon reads (apt's _apt user above all) is therefore written with an
# explicit mode: install -m (whose -D/-d parents are 0755), onekube_put.

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
# The Kubernetes package repository; a minor release's is <this>/v1.N/deb/.
ONEKUBE_K8S_REPO=${ONEKUBE_K8S_REPO:-https://pkgs.k8s.io/core:/stable:}
# The sshd drop-in packer/gen_context writes so Packer can log in with a
# password; onekube_seal removes it.
ONEKUBE_BUILD_SSHD_CONF=/etc/ssh/sshd_config.d/00-onekube-build.conf
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
    'ONEAPP_K8S_CNI_PLUGIN'         'bootstrap' 'CNI plugin' 'O|list'
    'ONEAPP_K8S_PODS_NETWORK'       'bootstrap' 'Pod network CIDR' 'O|text'
    'ONEAPP_K8S_SERVICES_NETWORK'   'bootstrap' 'Service network CIDR' 'O|text'
    'ONEAPP_K8S_PORT'               'bootstrap' 'Kubernetes API server port' 'O|number'
    'ONEAPP_K8S_ADDRESS'            'bootstrap' 'NIC for Kubernetes traffic: a CIDR (e.g. 10.0.0.0/24) or a virtual network name (empty: the first NIC)' 'O|text'
    'ONEAPP_K8S_NODENAME'           'bootstrap' 'Node name prefix: nodes are named <prefix>-<VM ID> (empty: the role name, e.g. worker-42)' 'O|text'
    'ONEAPP_K8S_TAINTED_MASTER'     'bootstrap' 'Keep the control-plane taint: no workloads on masters' 'O|boolean'
    'ONEAPP_K8S_TOKEN_TTL'          'bootstrap' 'Join token lifetime, minted while a VM waits (Go duration, 15m to 24h)' 'O|text'
    'ONEKUBE_KUBECONFIG_RECIPIENTS' 'bootstrap' 'More kubeconfig users, name:key[:maxrole] separated by ; (age1... or ssh-ed25519 keys; maxrole view by default or cluster-admin); the owner is always authorized as cluster-admin through ONEKUBE_AGE_RECIPIENT in their user template' 'O|text'
    'ONEAPP_K8S_CONTROL_PLANE_EP'   'bootstrap' 'Control-plane endpoint host[:port]: a VIP or load balancer you run in front of the masters (empty: a local balancer on every node)' 'O|text'
    'ONEAPP_K8S_AUTOSCALE'          'bootstrap' 'Worker autoscaling bounds min:max, within the worker role min_vms and max_vms (empty: off)' 'O|text'
)
# END GENERATED ONE_SERVICE_PARAMS

onekube_log() {
	echo "onekube-appliance: $*" >&2
}

onekube_die() {
	onekube_log "ERROR: $*"
	return 1
}

# onekube_put MODE DEST: stdin into DEST with MODE, whatever the umask.
onekube_put() {
	local tmp
	tmp=$(mktemp)
	cat >"$tmp"
	install -m "$1" "$tmp" "$2"
	rm -f "$tmp"
}

# --- network seams (replaced in CI) -------------------------------------------

# onekube_fetch URL DEST: download URL to DEST, retrying transient failures.
onekube_fetch() {
	curl -fsSL --retry 5 --retry-delay 3 --connect-timeout 20 -o "$2" "$1"
}

# onekube_kube_packages: kubelet, kubeadm and kubectl at ONEKUBE_K8S_VERSION
# from the repository of that minor release, held there. apt checks the
# repository's signature as the unprivileged _apt user, so the keyring (and
# the .list file beside it) must be world-readable: gpg -o would make the
# keyring 0600 under the driver's umask, and apt-get update would fail with
# "NO_PUBKEY ... is not signed".
onekube_kube_packages() {
	local minor=${ONEKUBE_K8S_VERSION%.*} tmp
	local repo="$ONEKUBE_K8S_REPO/v${minor}/deb/"
	local keyring=/etc/apt/keyrings/kubernetes-apt-keyring.gpg
	tmp=$(mktemp -d)
	onekube_fetch "${repo}Release.key" "$tmp/Release.key"
	gpg --batch --yes --dearmor -o "$tmp/keyring.gpg" "$tmp/Release.key"
	install -d -m 0755 /etc/apt/keyrings
	install -m 0644 "$tmp/keyring.gpg" "$keyring"
	rm -rf "$tmp"
	echo "deb [signed-by=$keyring] ${repo} /" | onekube_put 0644 /etc/apt/sources.list.d/kubernetes.list
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
		onekube_die "ONEKUBE_K8S_VERSION='$ONEKUBE_K8S_VERSION': want MAJOR.MINOR.PATCH, e.g. 1.37.2" || return
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
	# Unpacked aside and installed file by file: tar as root would also
	# impose the archive's mode on /usr/local/bin itself.
	mkdir "$tmp/x"
	tar -C "$tmp/x" -xzf "$tmp/$tgz"
	install -m 0755 "$tmp"/x/bin/* /usr/local/bin/
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
	local pause tmp
	pause=$(kubeadm config images list --kubernetes-version "v$ONEKUBE_K8S_VERSION" 2>/dev/null | grep '/pause:' | head -n1)
	[[ -n $pause ]] || onekube_die "kubeadm lists no pause image for v$ONEKUBE_K8S_VERSION" || return
	tmp=$(mktemp)
	containerd config default >"$tmp"
	sed -i -E \
		-e 's/^([[:space:]]*SystemdCgroup[[:space:]]*=).*/\1 true/' \
		-e "s#^([[:space:]]*(sandbox_image|sandbox)[[:space:]]*=).*#\\1 \"$pause\"#" \
		"$tmp"
	grep -Eq '^[[:space:]]*SystemdCgroup[[:space:]]*=[[:space:]]*true' "$tmp" ||
		onekube_die "containerd config: no SystemdCgroup option to set" || return
	grep -Fq "\"$pause\"" "$tmp" ||
		onekube_die "containerd config: no sandbox image option to set" || return
	install -d -m 0755 /etc/containerd
	install -m 0644 "$tmp" /etc/containerd/config.toml
	rm -f "$tmp"
	printf 'runtime-endpoint: %s\nimage-endpoint: %s\n' "$ONEKUBE_CRI_SOCKET" "$ONEKUBE_CRI_SOCKET" |
		onekube_put 0644 /etc/crictl.yaml
}

# onekube_host_config: kernel modules and sysctls kubeadm preflight checks,
# no swap (kubelet refuses it by default).
onekube_host_config() {
	install -d -m 0755 /etc/modules-load.d /etc/sysctl.d
	printf 'overlay\nbr_netfilter\n' | onekube_put 0644 /etc/modules-load.d/onekube.conf
	onekube_put 0644 /etc/sysctl.d/90-onekube.conf <<-'EOF'
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
	local tmp f
	tmp=$(mktemp -d)
	onekube_fetch "https://github.com/flannel-io/flannel/releases/download/v$ONEKUBE_FLANNEL_VERSION/kube-flannel.yml" \
		"$tmp/flannel.yaml"
	onekube_fetch "https://raw.githubusercontent.com/projectcalico/calico/v$ONEKUBE_CALICO_VERSION/manifests/calico.yaml" \
		"$tmp/calico.yaml"
	for f in "$tmp"/*.yaml; do
		grep -q '^kind:' "$f" || onekube_die "$(basename "$f") does not look like a Kubernetes manifest" || return
	done
	install -d -m 0755 "$ONEKUBE_CNI_DIR"
	install -m 0644 "$tmp"/*.yaml "$ONEKUBE_CNI_DIR/"
	rm -rf "$tmp"
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
	systemctl enable containerd.service kubelet.service onekube-lb.service onekube-bootstrap.service
}

# onekube_seal: nothing of the build VM's identity may reach the instances.
#   - Its hostname: one-context named it from the build context, and every
#     node would otherwise boot with that name until something renamed it.
#     Like one-apps' own images (packer/debian/98-collect-garbage.sh) the
#     image gets no /etc/hostname: one-context names each instance
#     (SET_HOSTNAME, DNS_HOSTNAME, EC2_HOSTNAME) or systemd falls back to its
#     default, never to a shared build name. /etc/hosts loses the build
#     name's entries (one-context tags its own with "# one-contextd").
#   - machine-id (kubelet and kubeadm key node identity on it) is emptied,
#     so systemd makes a new one at each clone's first boot.
#   - SSH host keys: one-context regenerates missing ones at boot
#     (context-linux loc-24-ssh_host_key).
#   - The build's password-login sshd drop-in (the password itself is
#     disabled by virt-sysprep once the VM is off; Packer's open SSH
#     connection is not affected by either).
onekube_seal() {
	local name=''
	apt-get clean
	rm -rf /var/lib/apt/lists/* "$ONEKUBE_DEB"
	[[ ! -s /etc/hostname ]] || name=$(head -n1 /etc/hostname)
	rm -f /etc/hostname
	if [[ -f /etc/hosts ]]; then
		sed -i -e '/#[[:space:]]*one-contextd[[:space:]]*$/d' /etc/hosts
		if [[ $name =~ ^[A-Za-z0-9][-A-Za-z0-9.]*$ && $name != localhost ]]; then
			# Drop the name from every line, then lines left with an address only.
			sed -i -E -e "s/[[:space:]]+${name//./\\.}([[:space:]]|\$)/\1/g" \
				-e '/^[[:space:]]*[0-9A-Fa-f:.]+[[:space:]]*(#.*)?$/d' /etc/hosts
		fi
	fi
	onekube_put 0444 /etc/machine-id </dev/null
	rm -f /var/lib/dbus/machine-id /etc/ssh/ssh_host_* "$ONEKUBE_BUILD_SSHD_CONF"
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
	onekube_seal
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
