# shellcheck shell=bash
# Helpers shared by packaging/test.sh and appliance/check.sh: tools from
# Debian's archive, and a cached minimal Debian root made with debootstrap.
# Source it; it defines functions and sets nothing else.

# stamp MSG: print MSG with the seconds since the script started.
stamp() {
	echo "== [$((SECONDS))s] $*"
}

# fail MSG: report a failed check and stop.
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# need_root: debootstrap, chroot and dpkg --root all need it.
need_root() {
	[[ $(id -u) == 0 ]] || fail "must run as root (debootstrap and chroot need it)"
}

# need_tools CMD=PKG...: apt-get install the packages whose command is missing.
need_tools() {
	local want=() pair
	for pair in "$@"; do
		command -v "${pair%%=*}" >/dev/null 2>&1 || want+=("${pair#*=}")
	done
	((${#want[@]} == 0)) && return 0
	stamp "apt-get install ${want[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
}

# debian_mirror: the first Debian archive URI the host's apt is configured
# with, deb822 (sources.list.d/*.sources) or one-line (sources.list) style.
# CI can reach only that mirror, so it is never hard-coded here.
debian_mirror() {
	local uri
	uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}')
	if [[ -z $uri ]]; then
		uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk '$1 == "deb" && $0 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}')
	fi
	[[ -n $uri ]] || fail "no Debian mirror found in /etc/apt/sources.list*"
	echo "$uri"
}

# debian_suite: the host's release codename (the root matches the host).
debian_suite() {
	local suite
	suite=$(awk -F= '$1 == "VERSION_CODENAME" {gsub(/"/, "", $2); print $2}' /etc/os-release)
	[[ -n $suite ]] || fail "no VERSION_CODENAME in /etc/os-release"
	echo "$suite"
}

# debian_root DIR PKG,PKG...: a fresh minbase Debian root with those extra
# packages in DIR. The first call per package set runs debootstrap and keeps a
# tarball under ONEKUBE_CACHE (default ~/.cache/onekube); later calls unpack it.
debian_root() {
	local dir=$1 include=$2 suite mirror cache key tarball
	suite=$(debian_suite)
	mirror=$(debian_mirror)
	cache=${ONEKUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/onekube}
	key=$(printf '%s %s %s' "$suite" "$mirror" "$include" | sha256sum | cut -c1-12)
	tarball=$cache/debian-$suite-minbase-$key.tar
	mkdir -p "$cache" "$dir"
	if [[ ! -s $tarball ]]; then
		local t0=$SECONDS build=$cache/build-$key
		stamp "debootstrap --variant=minbase --include=$include $suite $mirror"
		rm -rf "$build"
		debootstrap --variant=minbase --include="$include" "$suite" "$build" "$mirror" >"$cache/debootstrap-$key.log" 2>&1 ||
			{ tail -20 "$cache/debootstrap-$key.log" >&2; fail "debootstrap failed (log: $cache/debootstrap-$key.log)"; }
		rm -rf "$build/var/cache/apt/archives/"*.deb
		tar -C "$build" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
		rm -rf "$build"
		stamp "debootstrap done in $((SECONDS - t0))s, cached as $tarball ($(du -h "$tarball" | cut -f1))"
	fi
	tar -C "$dir" -xf "$tarball"
}
