#!/bin/sh
# On removal (not on upgrade) drop the units' enablement symlinks, so no
# dangling wants/ link stays behind. dpkg passes "remove", rpm passes 0.
# systemctl edits the links offline too (chroots, image builds).
set -e
case "$1" in
remove | 0)
	if command -v systemctl >/dev/null 2>&1; then
		systemctl disable onekube-bootstrap.service onekube-serve.service onekube-node.service || true
	fi
	;;
esac
exit 0
