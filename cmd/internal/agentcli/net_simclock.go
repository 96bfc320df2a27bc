//go:build simclock

package agentcli

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// SimNetEnv names the simulated network's directory, where <dir>/<ip>
// links to each VM's root (agent/internal/simcluster). Its VMs share one
// host, so a listener asked for at a VM address listens on loopback and
// says where in <dir>/<ip>.<port>.listen, which Dial reads. No production
// build has this.
const SimNetEnv = "ONEKUBE_STANDIN_NET"

func simFile(dir, addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, strings.ReplaceAll(host, ":", "_")+"."+port+".listen"), nil
}

// Listen listens at addr, or in the simulation on loopback for addr.
func Listen(network, addr string) (net.Listener, error) {
	dir := os.Getenv(SimNetEnv)
	if dir == "" {
		return net.Listen(network, addr)
	}
	f, err := simFile(dir, addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen(network, "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	tmp := f + ".tmp"
	if err := os.WriteFile(tmp, []byte(ln.Addr().String()), 0o644); err != nil {
		_ = ln.Close()
		return nil, err
	}
	if err := os.Rename(tmp, f); err != nil {
		_ = ln.Close()
		return nil, err
	}
	return ln, nil
}

// Dial connects to addr, or in the simulation to what listens for it.
func Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	dir := os.Getenv(SimNetEnv)
	if dir == "" {
		return d.DialContext(ctx, network, addr)
	}
	f, err := simFile(dir, addr)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: fmt.Errorf("%s: %w", addr, syscall.ECONNREFUSED)}
	}
	return d.DialContext(ctx, network, strings.TrimSpace(string(b)))
}
