package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	bootstraputil "k8s.io/cluster-bootstrap/token/util"

	"github.com/onekube/onekube/agent/internal/standin/env"
)

// Checks kubeadm makes on a config, in its wording where it matters. They
// are written against kubeadm's and cluster-bootstrap's rules, not against
// onekube's own helpers, so the stand-in can catch bugs in those helpers.

func validateInit(c *config) error {
	if c.init == nil || c.cluster == nil {
		return errors.New("the stand-in needs both an InitConfiguration and a ClusterConfiguration in --config")
	}
	var errs []string
	add := func(field, value, why string) {
		errs = append(errs, fmt.Sprintf("%s: Invalid value: %q: %s", field, value, why))
	}
	if len(c.init.tokens) == 0 {
		errs = append(errs, "bootstrapTokens: Required value: the stand-in needs the token in the config (onekube always sets one)")
	}
	for i, t := range c.init.tokens {
		if t.Token == nil {
			errs = append(errs, fmt.Sprintf("bootstrapTokens[%d].token: Required value", i))
		}
	}
	if a := c.init.advertise; a != "" {
		if ip, err := netip.ParseAddr(a); err != nil || ip.IsUnspecified() {
			add("localAPIEndpoint.advertiseAddress", a, "cannot parse IP address")
		}
	}
	if p := c.init.bindPort; p < 0 || p > 65535 {
		add("localAPIEndpoint.bindPort", strconv.Itoa(int(p)), "must be a valid port")
	}
	if ip := c.init.nodeIP; ip != "" {
		if _, err := netip.ParseAddr(ip); err != nil {
			add("nodeRegistration.kubeletExtraArgs[node-ip]", ip, "not an IP address")
		}
	}
	errs = append(errs, subnetErrors("networking.podSubnet", c.cluster.podSubnet)...)
	errs = append(errs, subnetErrors("networking.serviceSubnet", c.cluster.serviceSubnet)...)
	if ep := c.cluster.controlPlaneEndpoint; ep != "" {
		if _, _, err := net.SplitHostPort(ep); err != nil && net.ParseIP(ep) == nil && strings.Contains(ep, ":") {
			add("controlPlaneEndpoint", ep, err.Error())
		}
	}
	if k := c.init.certKey; k != "" {
		if b, err := hex.DecodeString(k); err != nil || len(b) != 32 {
			errs = append(errs, "certificateKey: Invalid value: must be 32 bytes hex-encoded")
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return checkSkew(c)
}

// subnetErrors checks a comma-separated CIDR list as kubeadm does.
func subnetErrors(field, s string) []string {
	if s == "" {
		return nil
	}
	var errs []string
	for _, cidr := range strings.Split(s, ",") {
		if _, _, err := net.ParseCIDR(strings.TrimSpace(cidr)); err != nil {
			errs = append(errs, fmt.Sprintf("%s: Invalid value: %q: couldn't parse subnet", field, s))
		}
	}
	return errs
}

// checkSkew applies kubeadm's version rules: kubeadm v1.N deploys control
// planes from v1.(N-1).0 on. (v1beta3 is refused while decoding.)
func checkSkew(c *config) error {
	own, err := minorOf(env.Version())
	if err != nil {
		return fmt.Errorf("stand-in version %q: %w", env.Version(), err)
	}
	kv := c.cluster.kubernetesVersion
	if kv == "" {
		return errors.New("could not fetch a Kubernetes version from the internet: unable to get URL \"https://dl.k8s.io/release/stable-1.txt\": no network in the stand-in; set kubernetesVersion")
	}
	minor, err := minorOf(kv)
	if err != nil {
		return fmt.Errorf("kubernetesVersion: Invalid value: %q: %w", kv, err)
	}
	if minor < own-1 {
		return fmt.Errorf("this version of kubeadm only supports deploying clusters with the control plane version >= 1.%d.0. Current version: %s", own-1, kv)
	}
	return nil
}

// minorOf reads the minor of "v1.36.3" / "1.36.3" / "v1.36.0-rc.1".
func minorOf(v string) (int, error) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 3 || parts[0] != "1" {
		return 0, errors.New("not a v1.MINOR.PATCH version")
	}
	return strconv.Atoi(parts[1])
}

func validateJoin(c *config) error {
	j := c.join
	if j == nil {
		return errors.New("no JoinConfiguration in --config")
	}
	if j.fileDiscovery {
		return errors.New("discovery.file: the stand-in only supports bootstrap token discovery")
	}
	var errs []string
	if !bootstraputil.IsValidBootstrapToken(j.token) {
		errs = append(errs, "discovery.bootstrapToken.token: Invalid value: the bootstrap token is invalid")
	}
	if j.tlsToken != "" && !bootstraputil.IsValidBootstrapToken(j.tlsToken) {
		errs = append(errs, "discovery.tlsBootstrapToken: Invalid value: the bootstrap token is invalid")
	}
	if j.endpoint == "" {
		errs = append(errs, "discovery.bootstrapToken.apiServerEndpoint: Required value")
	} else if _, _, err := net.SplitHostPort(j.endpoint); err != nil {
		errs = append(errs, fmt.Sprintf("discovery.bootstrapToken.apiServerEndpoint: Invalid value: %q: %v", j.endpoint, err))
	}
	if len(j.hashes) == 0 && !j.unsafeSkipCA {
		errs = append(errs, "discovery.bootstrapToken.caCertHashes: Invalid value: using token-based discovery without caCertHashes can be unsafe. Set unsafeSkipCAVerification as true in your kubeadm config file or pass --discovery-token-unsafe-skip-ca-verification flag to continue")
	}
	for _, h := range j.hashes {
		if err := checkPin(h); err != nil {
			errs = append(errs, fmt.Sprintf("discovery.bootstrapToken.caCertHashes: Invalid value: %q: %v", h, err))
		}
	}
	if ip := j.nodeIP; ip != "" {
		if _, err := netip.ParseAddr(ip); err != nil {
			errs = append(errs, fmt.Sprintf("nodeRegistration.kubeletExtraArgs[node-ip]: Invalid value: %q", ip))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// checkPin applies the format kubeadm's discovery pins use: "sha256:" and
// exactly 32 bytes of hex. (kubeadm's `config validate` skips the length;
// a real join fails on it, so the stand-in checks it here.)
func checkPin(h string) error {
	kind, value, ok := strings.Cut(h, ":")
	if !ok {
		return errors.New(`expected a "<type>:<value>" public key hash`)
	}
	if kind != "sha256" {
		return fmt.Errorf("unknown hash type %q", kind)
	}
	b, err := hex.DecodeString(value)
	if err != nil || len(b) != 32 {
		return errors.New("expected a 32 byte SHA-256 hash")
	}
	return nil
}
