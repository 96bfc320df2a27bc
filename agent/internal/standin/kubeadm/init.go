package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/onekube/onekube/agent/internal/standin/env"
)

func runInit(args []string, e *env.Entry, out io.Writer) error {
	o, err := parseFlags("init", args, "config", "skip-token-print", "upload-certs", "ignore-preflight-errors")
	if err != nil {
		return err
	}
	if o.config == "" {
		return errors.New("the stand-in needs --config (onekube never configures kubeadm by flags)")
	}
	root, err := env.Root()
	if err != nil {
		return err
	}
	c, err := readConfig(env.Resolve(root, o.config))
	if err != nil {
		return err
	}
	if err := validateInit(c); err != nil {
		return err
	}
	ic, cc := c.init, c.cluster
	port := ic.bindPort
	if port == 0 {
		port = 6443
	}
	advertise := ic.advertise
	if advertise == "" {
		advertise = "127.0.0.1"
	}
	endpoint := net.JoinHostPort(advertise, strconv.Itoa(int(port)))
	tok := ic.tokens[0]
	tainted := ic.taints == nil
	e.APIVersion, e.KubernetesVersion = c.apiVersion, cc.kubernetesVersion
	e.NodeName, e.NodeIP, e.Endpoint = ic.nodeName, ic.nodeIP, endpoint
	e.TokenID, e.Token = tok.Token.ID, tok.Token.String()
	if tok.TTL != nil {
		e.TokenTTL = tok.TTL.Duration.String()
	}
	e.Tainted = &tainted
	fmt.Fprintf(out, "[init] Using Kubernetes version: %s\n", cc.kubernetesVersion)

	if err := env.Delay(); err != nil {
		return err
	}
	if err := preflight(root, o, append([]string{adminConfFile}, manifestFiles()...)...); err != nil {
		return err
	}
	hash, err := writeControlPlane(root, c, endpoint)
	if err != nil {
		return inPhase("certs", err)
	}
	e.Hash = strings.TrimPrefix(hash, "sha256:")
	if err := env.AddNode(root, env.Node{Name: ic.nodeName, Role: "control-plane"}); err != nil {
		return err
	}
	// An injected init failure comes after the files, as a real one at
	// wait-control-plane does: a retry without `kubeadm reset` then trips
	// preflight, which is what the agent has to handle.
	if fail, err := env.ShouldFail(root, "init"); err != nil || fail {
		if err != nil {
			return err
		}
		return inPhase("wait-control-plane", errors.New("could not initialize a Kubernetes cluster: failed while waiting for the kubelet to start: The HTTP call equal to 'curl -sSL http://127.0.0.1:10248/healthz' returned error: context deadline exceeded (injected by "+env.VarFail+")"))
	}

	shown := "<value withheld>"
	if !o.skipTokenPrint {
		shown = tok.Token.String()
	}
	server := endpoint
	if cc.controlPlaneEndpoint != "" {
		server = cc.controlPlaneEndpoint
	}
	fmt.Fprintf(out, "\nYour Kubernetes control-plane has initialized successfully!\n\n"+
		"Then you can join any number of worker nodes by running the following on each as root:\n\n"+
		"kubeadm join %s --token %s \\\n\t--discovery-token-ca-cert-hash %s\n", server, shown, hash)
	return nil
}

// writeControlPlane writes the CA, the admin and kubelet kubeconfigs and the
// static pod manifests, and returns the CA's pin.
func writeControlPlane(root string, c *config, endpoint string) (string, error) {
	authority, err := newCA(c.cluster.encryptionAlgorithm)
	if err != nil {
		return "", err
	}
	if err := writeFile(root, caCertFile, authority.certPEM, 0o644); err != nil {
		return "", err
	}
	if err := writeFile(root, caKeyFile, authority.keyPEM, 0o600); err != nil {
		return "", err
	}
	server := "https://" + endpoint
	if cpe := c.cluster.controlPlaneEndpoint; cpe != "" {
		server = "https://" + cpe
	}
	for _, kc := range []struct{ file, cn, org string }{
		{adminConfFile, "kubernetes-admin", "kubeadm:cluster-admins"},
		{kubeletConfFile, "system:node:" + c.init.nodeName, "system:nodes"},
	} {
		certPEM, keyPEM, err := authority.clientCert(kc.cn, kc.org)
		if err != nil {
			return "", err
		}
		user := map[string]any{"client-certificate-data": certPEM, "client-key-data": keyPEM}
		b, err := kubeconfig(server, authority.certPEM, kc.cn, user)
		if err != nil {
			return "", err
		}
		if err := writeFile(root, kc.file, b, 0o600); err != nil {
			return "", err
		}
	}
	for i, f := range manifestFiles() {
		if err := writeFile(root, f, staticPod(staticPods[i], c.cluster.kubernetesVersion), 0o600); err != nil {
			return "", err
		}
	}
	return pinOf(authority.certPEM)
}
