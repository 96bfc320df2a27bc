package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// EtcHosts maps the node name to the node's address, so the name resolves
// on the node itself as kubeadm's preflight (and anything reading the
// hostname) expects.
const EtcHosts = "/etc/hosts"

// hostsMarker tags the one line of /etc/hosts the agent owns.
const hostsMarker = "# onekube node name"

// setHostname makes the machine's hostname the node name and maps it in
// /etc/hosts. one-context renames a VM only when its CONTEXT asks
// (SET_HOSTNAME and friends, one-apps net-15-hostname), so otherwise every
// VM of the image has the same name; the node name comes from the VM's
// identity, and the hostname is made to agree with it.
func setHostname(ctx context.Context, d Data) error {
	if n := d.Node(); n.Kind == KindWorker && !n.MasterHint {
		// A worker of a none deployment renames its VM now (identity.go),
		// in its share of the start-up window (startWindow counts the
		// request): the READYs of those workers come in the same
		// seconds. The others do after their READY, a straight worker's
		// following its share of that window.
		checkIdentity(ctx, d)
	}
	name, addr := d.Config().NodeName, d.Config().Address
	cur, err := d.Hostname().Get()
	if err != nil {
		d.Log().Warn("reading the hostname failed", "error", err)
	}
	if cur != name {
		if err := d.Hostname().Set(name); err != nil {
			return err
		}
		d.Log().Info("hostname set to the node name", "was", cur, "now", name)
	}
	old, err := d.Root().ReadFile(EtcHosts)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading %s: %w", EtcHosts, err)
	}
	updated := hostsWith(string(old), addr.String(), name)
	if updated == string(old) {
		return nil
	}
	if err := d.Root().WriteFile(EtcHosts, []byte(updated), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", EtcHosts, err)
	}
	return nil
}

// hostsWith returns hosts with the agent's line mapping name to addr, in
// place of any earlier one of its lines; the rest is kept as it was.
func hostsWith(hosts, addr, name string) string {
	line := addr + "\t" + name + "\t" + hostsMarker
	var out []string
	placed := false
	for _, l := range strings.SplitAfter(hosts, "\n") {
		if l == "" {
			continue
		}
		if strings.Contains(l, hostsMarker) {
			if !placed {
				out = append(out, line+"\n")
				placed = true
			}
			continue
		}
		if !strings.HasSuffix(l, "\n") {
			l += "\n"
		}
		out = append(out, l)
	}
	if !placed {
		out = append(out, line+"\n")
	}
	return strings.Join(out, "")
}
