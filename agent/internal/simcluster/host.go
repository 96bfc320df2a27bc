package simcluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/onekube/onekube/context/onegatesim"
)

// ImageHostname is the hostname the appliance image boots with. Every VM
// has it until something renames it: one-context does only when the
// CONTEXT asks (SET_HOSTNAME, one-apps net-15-hostname), as on a real
// cloud, so two agents that trusted the hostname would agree on a name.
const ImageHostname = "onekube-appliance"

// boot sets up a VM's host the first time it boots (again after
// Recreate): its own disk, the root, with what the image carries (the
// kernel hostname as <root>/proc/sys/kernel/hostname, /etc/hostname,
// /etc/hosts, the CNI manifest), and its address on the simulated network,
// where <NetDir>/<ip> links to the root. A root that exists is a disk that
// survived a reboot and is left alone.
func (c *Cluster) boot(vm onegatesim.VMInfo) error {
	root := c.RootOf(vm.ID)
	if err := os.MkdirAll(c.NetDir(), 0o755); err != nil {
		return err
	}
	link := filepath.Join(c.NetDir(), vm.IP.String())
	if err := os.Symlink(root, link); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("attaching VM %d to the network: %w", vm.ID, err)
	}
	if _, err := os.Stat(root); err == nil {
		return nil
	}
	host := ImageHostname
	if h := strings.TrimSpace(c.Sim.Context(vm.ID)["SET_HOSTNAME"]); h != "" {
		host = h
	}
	files := map[string]string{
		"proc/sys/kernel/hostname": host + "\n",
		"etc/hostname":             host + "\n",
		"etc/hosts":                "127.0.0.1\tlocalhost\n127.0.1.1\t" + host + "\n",
	}
	if c.o.CNIManifest != "" {
		files[strings.TrimPrefix(CNIDir, "/")+"/flannel.yaml"] = c.o.CNIManifest
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// NetDir is the simulated network: <NetDir>/<ip> links to the root of the
// VM with that address (the stand-ins' ONEKUBE_STANDIN_NET).
func (c *Cluster) NetDir() string { return filepath.Join(c.o.Dir, "net") }

// Hostname is a VM's kernel hostname now.
func (c *Cluster) Hostname(vmid int) string {
	b, _ := os.ReadFile(filepath.Join(c.RootOf(vmid), "proc/sys/kernel/hostname"))
	return strings.TrimSpace(string(b))
}
