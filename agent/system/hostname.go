package system

import (
	"fmt"
	"strings"
	"syscall"
)

// Hostname is the machine's name as the rest of the system sees it: the
// kernel's (what the kubelet and `hostname` read) and /etc/hostname (what
// the next boot sets). The agent makes it agree with the node name.
type Hostname interface {
	Get() (string, error)
	Set(name string) error
}

// Files of a host's name, joined to its root.
const (
	EtcHostname = "/etc/hostname"
	// KernelHostnameFile is where Linux exposes the kernel's hostname; a
	// simulated host (see RootHostname) keeps it as a plain file.
	KernelHostnameFile = "/proc/sys/kernel/hostname"
)

// HostnameFor returns the real machine's Hostname for the root "/", and a
// simulated host's for any other root: a root other than / is a test bed
// or demo VM, whose kernel the agent must not rename.
func HostnameFor(root Root) Hostname {
	if root.Path("/") == "/" {
		return KernelHostname{Root: root}
	}
	return RootHostname{Root: root}
}

// KernelHostname sets the running kernel's hostname with sethostname(2)
// (the agent runs as root) and writes /etc/hostname.
type KernelHostname struct{ Root Root }

var _ Hostname = KernelHostname{}

// Get reads the kernel's hostname.
func (h KernelHostname) Get() (string, error) {
	b, err := h.Root.ReadFile(KernelHostnameFile)
	if err != nil {
		return "", fmt.Errorf("reading the hostname: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Set renames the machine now and for the next boot.
func (h KernelHostname) Set(name string) error {
	if err := syscall.Sethostname([]byte(name)); err != nil {
		return fmt.Errorf("setting the hostname: %w", err)
	}
	return writeEtcHostname(h.Root, name)
}

// RootHostname is the name of a host simulated under a root: the kernel's
// hostname is the file <root>/proc/sys/kernel/hostname, which the test bed
// seeds with the image's default (the same on every VM, as on a real cloud
// where the image keeps the name it was built with).
type RootHostname struct{ Root Root }

var _ Hostname = RootHostname{}

// Get reads the simulated kernel hostname.
func (h RootHostname) Get() (string, error) {
	b, err := h.Root.ReadFile(KernelHostnameFile)
	if err != nil {
		return "", fmt.Errorf("reading the hostname: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Set writes the simulated kernel hostname and /etc/hostname.
func (h RootHostname) Set(name string) error {
	if err := h.Root.WriteFile(KernelHostnameFile, []byte(name+"\n"), 0o644); err != nil {
		return fmt.Errorf("setting the hostname: %w", err)
	}
	return writeEtcHostname(h.Root, name)
}

func writeEtcHostname(root Root, name string) error {
	if err := root.WriteFile(EtcHostname, []byte(name+"\n"), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", EtcHostname, err)
	}
	return nil
}
