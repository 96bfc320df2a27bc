package context

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// LocalBalancer is the control-plane endpoint when ONEAPP_K8S_CONTROL_PLANE_EP
// is empty: every node runs `onekubed lb` there, in front of all
// masters' API servers (docs/architecture.md §3). Port 6444 because the API
// server itself holds 6443 on a master.
const LocalBalancer = "127.0.0.1:6444"

// ParseControlPlaneEndpoint reads ONEAPP_K8S_CONTROL_PLANE_EP: host[:port],
// host an IP (IPv6 in brackets when a port follows) or a DNS name, port
// defaultPort when absent. It returns "host:port" as kubeadm's
// controlPlaneEndpoint wants it. The endpoint is a VIP or load balancer the
// user runs in front of the masters, so addresses no other node could reach
// (loopback, unspecified, link-local, multicast) are refused.
func ParseControlPlaneEndpoint(raw string, defaultPort int) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", nil
	}
	if strings.Contains(raw, "://") || strings.ContainsAny(raw, "/?#@ \t") {
		return "", fmt.Errorf("%q: want host[:port], e.g. 10.0.0.100 or k8s.example.com:6443 (no scheme or path)", raw)
	}
	host, port := raw, strconv.Itoa(defaultPort)
	if h, p, err := net.SplitHostPort(raw); err == nil {
		host, port = h, p
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("%q: port %q is not a TCP port (1-65535)", raw, p)
		}
	} else if strings.HasPrefix(raw, "[") && strings.HasSuffix(raw, "]") {
		host = raw[1 : len(raw)-1]
	} else if strings.Count(raw, ":") == 1 {
		return "", fmt.Errorf("%q: %v", raw, err)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if why := unreachable(a); why != "" {
			return "", fmt.Errorf("%q: %s is %s, which other nodes cannot reach; name the VIP or load balancer in front of the masters", raw, a, why)
		}
		return net.JoinHostPort(a.String(), port), nil
	}
	if !dnsName(host) {
		return "", fmt.Errorf("%q: %q is neither an IP address nor a DNS name", raw, host)
	}
	return net.JoinHostPort(strings.ToLower(host), port), nil
}

func unreachable(a netip.Addr) string {
	switch {
	case a.Zone() != "":
		return "scoped to an interface"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified():
		return "the unspecified address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsMulticast():
		return "a multicast address"
	}
	return ""
}

// dnsName reports whether s is a DNS name of RFC 1123 labels (any case),
// as a certificate SAN and kubeadm accept it.
func dnsName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(strings.TrimSuffix(s, "."), ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, c := range strings.ToLower(l) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
