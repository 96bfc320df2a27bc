//go:build !simclock

package agentcli

import (
	"context"
	"net"
)

// Listen and Dial are the network of both programs for a joining
// master's presentation (agent/certgrant). The simulated cluster's build
// (-tags simclock, whose VMs share one host) maps VM addresses instead
// (net_simclock.go).
func Listen(network, addr string) (net.Listener, error) { return net.Listen(network, addr) }

// Dial connects; see Listen.
func Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}
