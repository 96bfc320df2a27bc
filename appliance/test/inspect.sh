# shellcheck shell=bash
# Checks of the root `service install` produced, for appliance/check.sh,
# which sources this file after setting root, work and fail (testlib.sh).
# shellcheck disable=SC2154 # root and work are check.sh's

# want_file PATH MODE: PATH exists in the root with octal MODE.
want_file() {
	[[ -e $root$1 ]] || fail "$1 missing"
	[[ $(stat -c '%a' "$root$1") == "$2" ]] || fail "$1: mode $(stat -c '%a' "$root$1"), want $2"
}

# inspect_install K8S_VERSION: what the install steps must leave behind.
inspect_install() {
	local v=$1 p got c u cnis
	want_file /usr/local/bin 755
	want_file /usr/local/bin/containerd 755
	want_file /usr/local/bin/ctr 755
	want_file /usr/local/sbin/runc 755
	want_file /usr/local/lib/systemd 755
	want_file /usr/local/lib/systemd/system 755
	want_file /usr/local/lib/systemd/system/containerd.service 644
	want_file /etc/containerd 755
	want_file /etc/containerd/config.toml 644
	want_file /etc/crictl.yaml 644
	want_file /etc/modules-load.d/onekube.conf 644
	want_file /etc/sysctl.d/90-onekube.conf 644
	want_file /etc/apt/keyrings 755
	want_file /etc/apt/keyrings/kubernetes-apt-keyring.gpg 644
	want_file /etc/apt/sources.list.d/kubernetes.list 644
	# The onekube package: the bootstrap agent and the daemon its units run.
	want_file /usr/bin/onekube-agent 755
	want_file /usr/bin/onekubed 755
	grep -Eq "^ *SystemdCgroup = true$" "$root/etc/containerd/config.toml" || fail "containerd: SystemdCgroup not true"
	grep -Eq '^ *sandbox = "registry.k8s.io/pause:3.10"$' "$root/etc/containerd/config.toml" ||
		fail "containerd: sandbox image not kubeadm's pause"
	grep -q 'br_netfilter' "$root/etc/modules-load.d/onekube.conf" || fail "modules-load: br_netfilter"
	grep -q 'net.ipv4.ip_forward = 1' "$root/etc/sysctl.d/90-onekube.conf" || fail "sysctl: ip_forward"
	grep -qxF "deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] file:///srv/onekube-k8s-repo/v${v%.*}/deb/ /" \
		"$root/etc/apt/sources.list.d/kubernetes.list" ||
		fail "kubernetes.list: $(cat "$root/etc/apt/sources.list.d/kubernetes.list")"
	# The pinned version, not the newer patch release the repository also has.
	for p in kubelet kubeadm kubectl; do
		# shellcheck disable=SC2016 # a dpkg-query format
		got=$(chroot "$root" dpkg-query -W -f '${Version}' "$p")
		[[ $got == "$v-1.1" ]] || fail "$p $got installed, want $v-1.1"
	done
	[[ $(chroot "$root" apt-mark showhold | sort | tr '\n' ' ') == "kubeadm kubectl kubelet " ]] ||
		fail "held packages: $(chroot "$root" apt-mark showhold | tr '\n' ' ')"
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
	# shellcheck disable=SC2016 # a dpkg-query format
	chroot "$root" dpkg-query -W -f '${Status}' onekube | grep -q 'install ok installed' || fail "onekube package not installed"
	# Pre-pulled: kubeadm's list for the pinned version, then the CNI images.
	local flannel calico
	flannel=$(sed -n 's/^ONEKUBE_FLANNEL_VERSION=//p' appliance/versions.env)
	calico=$(sed -n 's/^ONEKUBE_CALICO_VERSION=//p' appliance/versions.env)
	sort >"$work/want-pulls" <<-EOF
		registry.k8s.io/kube-apiserver:v$v
		registry.k8s.io/kube-controller-manager:v$v
		registry.k8s.io/kube-scheduler:v$v
		registry.k8s.io/kube-proxy:v$v
		registry.k8s.io/coredns/coredns:v1.12.1
		registry.k8s.io/pause:3.10
		registry.k8s.io/etcd:3.6.4-0
		ghcr.io/flannel-io/flannel-cni-plugin:v1.7.1-flannel1
		ghcr.io/flannel-io/flannel:v$flannel
		docker.io/calico/cni:v$calico
		docker.io/calico/node:v$calico
		docker.io/calico/kube-controllers:v$calico
	EOF
	sort "$root/var/log/onekube-stub/pull.log" | diff -u "$work/want-pulls" - >&2 ||
		fail "pre-pulled images differ (- want, + got)"
	[[ -z $(find "$root/var/lib/apt/lists" -type f ! -name lock 2>/dev/null) ]] || fail "apt lists left in the image"
	[[ ! -e $root/tmp/onekube.deb ]] || fail "onekube.deb left in the image"
}

# inspect_modes MARKER: every file the install created or changed since
# MARKER is readable by other users (files o+r, directories o+rx), apart
# from what is private by design:
#   /etc/one-appliance                      the driver's own (0750)
#   /var/lib/onekube                        the agent's state (package: 0700)
#   /etc/shadow, /etc/gshadow (and backups) password hashes (root:shadow 0640)
#   /root, /tmp, /var/log                   root's home, scratch space, logs
#                                           (the driver's, apt's, the stubs')
#   apt's and dpkg's lock files and partial/ directories, debconf's
#   passwords.dat and ldconfig's cache      0600/0640/0700 by their tools
inspect_modes() {
	local marker=$1
	find "$root" -xdev \( -path "$root/proc" -o -path "$root/srv" -o -path "$root/root" -o -path "$root/tmp" \
		-o -path "$root/var/log" -o -path "$root/etc/one-appliance" -o -path "$root/var/lib/onekube" \
		-o -path "$root/var/cache/apt/archives/partial" -o -path "$root/var/lib/apt/lists/partial" \
		-o -path "$root/var/cache/ldconfig" \) -prune -o \
		-newer "$marker" \( \( -type f ! -perm -0004 \) -o \( -type d ! -perm -0005 \) \) \
		! -name 'shadow' ! -name 'shadow-' ! -name 'gshadow' ! -name 'gshadow-' \
		! -name 'lock' ! -name 'lock-frontend' ! -name 'Lock' ! -name 'passwords.dat' \
		-printf '%m /%P\n' | sort >"$work/private"
	[[ ! -s $work/private ]] || { cat "$work/private" >&2; fail "the install left files others cannot read (above)"; }
}

# inspect_seal BUILD_HOSTNAME: the image keeps nothing that identifies the
# build VM, nor the build's password login (the password itself is
# virt-sysprep's, after shutdown).
inspect_seal() {
	local name=$1
	[[ ! -e $root/etc/hostname ]] || fail "/etc/hostname survived: $(cat "$root/etc/hostname")"
	! grep -qw "$name" "$root/etc/hosts" || fail "build hostname left in /etc/hosts: $(grep -w "$name" "$root/etc/hosts")"
	grep -Eq '^127\.0\.0\.1[[:space:]]+localhost' "$root/etc/hosts" || fail "/etc/hosts lost localhost: $(cat "$root/etc/hosts")"
	[[ -f $root/etc/machine-id && ! -s $root/etc/machine-id ]] || fail "/etc/machine-id not emptied"
	want_file /etc/machine-id 444
	[[ ! -e $root/var/lib/dbus/machine-id ]] || fail "/var/lib/dbus/machine-id left"
	[[ -z $(find "$root/etc/ssh" -name 'ssh_host_*') ]] || fail "SSH host keys left in the image"
	[[ ! -e $root/etc/ssh/sshd_config.d/00-onekube-build.conf ]] || fail "the build's password-login sshd drop-in survived"
}
