#!/usr/bin/env bash
# A stand-in for one-apps' service driver (appliances/service.sh, which the
# Packer recipe installs as /etc/one-appliance/service), so that CI runs the
# appliance's stages the way the build and the VMs do. It keeps what decides
# the outcome of a stage:
#   - errexit and `umask 0077`, both set before service.d/appliance.sh is
#     sourced (service.sh: "set -e" then "umask 0077" at the top);
#   - the stage function called directly in that shell (not in a pipeline or
#     a condition, so errexit applies inside it), stderr joined to stdout;
#   - service_cleanup on exit, as its EXIT trap does (lib/functions.sh).
# The driver's lock, pid, status and motd files do not touch what the stages
# write, so they are left out; one-apps itself is not vendored.
#
#   driver.sh install|configure|bootstrap    one stage
#   driver.sh eval CMDS                      CMDS in the same setting
#
# ONEKUBE_STUBS names a file sourced after appliance.sh (CI's stand-ins).
set -e
umask 0077
# shellcheck source=appliance/appliance.sh
. /etc/one-appliance/service.d/appliance.sh
if [[ -n ${ONEKUBE_STUBS:-} ]]; then
	# shellcheck source=appliance/test/stubs.sh
	. "$ONEKUBE_STUBS"
fi
trap 'service_cleanup' EXIT

case ${1:-} in
install | configure | bootstrap)
	service_"$1" 2>&1
	;;
eval)
	eval "$2"
	;;
*)
	echo "usage: driver.sh install|configure|bootstrap | eval CMDS" >&2
	exit 2
	;;
esac
