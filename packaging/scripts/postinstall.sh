#!/bin/sh
# onekube-bootstrap.service is not enabled here: it runs kubeadm on the next
# boot, which must be a deliberate choice (the appliance build makes it).
# onekube-serve.service and onekube-node.service are enabled: they run only
# once bootstrap succeeded (ConditionPathExists=/var/lib/onekube/bootstrap.done),
# so on any other machine they do nothing. `systemctl enable` works offline
# (chroots, image builds). Then tell a running systemd about the unit files.
set -e
if command -v systemctl >/dev/null 2>&1; then
	systemctl enable onekube-serve.service onekube-node.service >/dev/null 2>&1 || true
fi
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
exit 0
