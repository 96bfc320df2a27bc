#!/usr/bin/env bash
# appliance/bundle.sh offline, from stand-in binaries and image archives
# (no network, no root): the file system's label, its layout, the manifest
# and every sum in it, the image template; and that a missing image, an
# archive tagged for another release and a kubeadm of another release are
# refused. Run by appliance/check.sh; alone: appliance/test/bundle.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "bundle test: $*" >&2; exit 1; }
v=v1.37.2
refs=("registry.k8s.io/kube-apiserver:$v" "registry.k8s.io/kube-controller-manager:$v"
	"registry.k8s.io/kube-scheduler:$v" "registry.k8s.io/kube-proxy:$v"
	registry.k8s.io/coredns/coredns:v1.14.6 registry.k8s.io/pause:3.10.2 registry.k8s.io/etcd:3.7.0-0)

# from/: what `make upgrade-bundle` would have downloaded.
from=$work/from
mkdir -p "$from/bin" "$from/images"
cat >"$from/bin/kubeadm" <<KUBEADM
#!/bin/sh
case "\$*" in
"version -o short") echo "\${FAKE_VERSION:-$v}" ;;
"config images list --kubernetes-version $v") printf '%s\n' ${refs[*]} ;;
*) echo "kubeadm stand-in: \$*" >&2; exit 1 ;;
esac
KUBEADM
printf '#!/bin/sh\necho "Kubernetes %s"\n' "$v" >"$from/bin/kubelet"
printf '#!/bin/sh\necho kubectl\n' >"$from/bin/kubectl"
chmod 0755 "$from/bin/"*
archive() { # ref file: a docker-archive of one empty layer tagged ref
	local d
	d=$(mktemp -d -p "$work")
	printf '{"os":"linux"}' >"$d/config.json"
	tar -cf "$d/layer.tar" -T /dev/null
	printf '[{"Config":"config.json","RepoTags":["%s"],"Layers":["layer.tar"]}]' "$1" >"$d/manifest.json"
	tar -C "$d" -cf "$2" manifest.json config.json layer.tar
}
for ref in "${refs[@]}"; do
	repo=${ref%:*}
	archive "$ref" "$from/images/${repo##*/}.tar"
done

img=$work/bundle.img
BUNDLE_FROM=$from appliance/bundle.sh "$v" "$img" >"$work/out" || { cat "$work/out"; fail "offline build failed"; }
[[ $(e2label "$img") == ONEKUBE-BUNDLE ]] || fail "label $(e2label "$img")"
mkdir -p "$work/fs" && debugfs -R "rdump / $work/fs" "$img" 2>/dev/null
root=$work/fs
[[ -f $root/onekube-bundle.json ]] || fail "no onekube-bundle.json at the root"
want_files=$( (printf 'bin/%s\n' kubeadm kubectl kubelet; for ref in "${refs[@]}"; do r=${ref%:*}; echo "images/${r##*/}.tar"; done) | LC_ALL=C sort)
got_files=$(cd "$root" && find . -type f ! -name onekube-bundle.json ! -path './lost+found/*' | sed 's|^\./||' | LC_ALL=C sort)
[[ $got_files == "$want_files" ]] || fail "files:\n$got_files\nwant:\n$want_files"
manifest=$(cat "$root/onekube-bundle.json")
[[ $manifest == '{"kubernetesVersion":"'$v'","files":{'* ]] || fail "manifest: $manifest"
for f in $want_files; do
	sum=$(sha256sum "$root/$f" | cut -d' ' -f1)
	[[ $manifest == *"\"$f\":\"$sum\""* ]] || fail "manifest lacks $f=$sum: $manifest"
	cmp -s "$root/$f" "$from/$f" || fail "$f differs from its source"
done
[[ -x $root/bin/kubeadm ]] || fail "bin/kubeadm lost its mode"
sum=$(sha256sum "$root/onekube-bundle.json" | cut -d' ' -f1)
grep -qx "ONEKUBE_BUNDLE_SHA256 = \"$sum\"" "$img.tmpl" || fail "template: $(cat "$img.tmpl")"
grep -qx 'TYPE = "DATABLOCK"' "$img.tmpl" || fail "template type"
grep -q "manifest sha256: $sum" "$work/out" || fail "output: $(cat "$work/out")"

refused() { # what, expected message, env...
	local what=$1 msg=$2
	shift 2
	if env "$@" BUNDLE_FROM="$from" appliance/bundle.sh "$v" "$work/bad.img" >"$work/bad.out" 2>&1; then
		fail "$what: accepted"
	fi
	grep -qF "$msg" "$work/bad.out" || fail "$what: $(cat "$work/bad.out")"
}
refused "kubeadm of another release" "bin/kubeadm is v1.36.3, not $v" FAKE_VERSION=v1.36.3
mv "$from/images/etcd.tar" "$work/etcd.tar"
refused "a missing image" "images/etcd.tar: missing (for registry.k8s.io/etcd:3.7.0-0)"
archive registry.k8s.io/etcd:3.6.8-0 "$from/images/etcd.tar"
refused "an image of another release" "images/etcd.tar is not a docker-archive tagged registry.k8s.io/etcd:3.7.0-0"
echo "bundle test: ok ($(du -h "$img" | cut -f1) image, $(echo "$want_files" | wc -l) files)"
