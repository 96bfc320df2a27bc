#!/bin/sh
# Forget the removed unit. /var/lib/onekube is kept: it records that this VM
# already joined a cluster, and deleting it would let a reinstall bootstrap
# again over a live node.
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
exit 0
