package lbconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// ConfigFile is where bootstrap seeds the backends and the balancer keeps
// what it learned, so a restart starts from the latest list.
const ConfigFile = "/var/lib/onekube/lb.json"

// Sources of a backend list.
const (
	SourceOneGate   = "onegate"   // bootstrap's seed: masters' NIC addresses
	SourceEndpoints = "endpoints" // the API servers' default/kubernetes
)

// Config is the file's content.
type Config struct {
	Backends []string `json:"backends"`
	Source   string   `json:"source,omitempty"`
}

// MaxBackends bounds the list: a master role has at most 7 VMs, a few
// more allow for replacements in flight.
const MaxBackends = 32

// Check requires every backend to be "ip:port" with a usable unicast IP,
// and at most MaxBackends of them. Names are refused: the balancer must
// never depend on DNS, which a VM may not have.
func (c Config) Check() error {
	if len(c.Backends) > MaxBackends {
		return fmt.Errorf("%d backends, at most %d", len(c.Backends), MaxBackends)
	}
	for _, b := range c.Backends {
		if _, err := ParseBackend(b); err != nil {
			return err
		}
	}
	return nil
}

// ParseBackend reads "ip:port" (IPv6 in brackets).
func ParseBackend(s string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("backend %q is not ip:port: %w", s, err)
	}
	a := ap.Addr()
	if ap.Port() == 0 || a.IsUnspecified() || a.IsMulticast() || a.Zone() != "" {
		return netip.AddrPort{}, fmt.Errorf("backend %q is not a unicast address and port", s)
	}
	return ap, nil
}

// Backend formats one backend.
func Backend(a netip.Addr, port int) string {
	return net.JoinHostPort(a.Unmap().String(), strconv.Itoa(port))
}

// Normalize sorts and de-duplicates, so equal lists compare equal.
func Normalize(bs []string) []string {
	out := slices.Clone(bs)
	slices.Sort(out)
	return slices.Compact(out)
}

// ReadConfig reads path; a missing file is an empty config.
func ReadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, err
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return Config{}, fmt.Errorf("reading %s: %w", path, err)
	}
	if err := c.Check(); err != nil {
		return Config{}, fmt.Errorf("reading %s: %w", path, err)
	}
	c.Backends = Normalize(c.Backends)
	return c, nil
}

// WriteConfig writes path atomically (0644: addresses only, no secret).
func WriteConfig(path string, c Config) error {
	if err := c.Check(); err != nil {
		return err
	}
	c.Backends = Normalize(c.Backends)
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
