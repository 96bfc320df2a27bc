package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/onekube/onekube/agent/internal/standin/env"
)

func runJoin(args []string, e *env.Entry, out io.Writer) error {
	o, err := parseFlags("join", args, "config", "ignore-preflight-errors")
	if err != nil {
		return err
	}
	if o.config == "" {
		return errors.New("the stand-in needs --config (onekube never joins by flags)")
	}
	root, err := env.Root()
	if err != nil {
		return err
	}
	c, err := readConfig(env.Resolve(root, o.config))
	if err != nil {
		return err
	}
	if err := validateJoin(c); err != nil {
		return err
	}
	j := c.join
	e.APIVersion, e.NodeName, e.NodeIP, e.Endpoint = c.apiVersion, j.nodeName, j.nodeIP, j.endpoint
	e.TokenID, _, _ = strings.Cut(j.token, ".")
	e.Token, e.ControlPlane = j.token, j.controlPlane
	if len(j.hashes) > 0 {
		e.Hash = strings.ToLower(strings.TrimPrefix(j.hashes[0], "sha256:"))
	}
	tainted := j.taints == nil && j.controlPlane
	e.Tainted = &tainted

	if err := env.Delay(); err != nil {
		return err
	}
	if err := preflight(root, o, kubeletConfFile, caCertFile); err != nil {
		return err
	}
	// Discovery fails before anything is written, as kubeadm's does.
	if fail, err := env.ShouldFail(root, "join"); err != nil || fail {
		if err != nil {
			return err
		}
		return inPhase("preflight", fmt.Errorf("couldn't validate the identity of the API Server: failed to request the cluster-info ConfigMap: Get \"https://%s/api/v1/namespaces/kube-public/configmaps/cluster-info?timeout=10s\": dial tcp %s: connect: connection refused (injected by %s)", j.endpoint, j.endpoint, env.VarFail))
	}
	caPEM, err := discoverCA(j.hashes, j.unsafeSkipCA)
	if err != nil {
		return inPhase("preflight", err)
	}
	if caPEM != nil {
		if err := writeFile(root, caCertFile, caPEM, 0o644); err != nil {
			return err
		}
	}
	user := map[string]any{
		"client-certificate": "/var/lib/kubelet/pki/kubelet-client-current.pem",
		"client-key":         "/var/lib/kubelet/pki/kubelet-client-current.pem",
	}
	b, err := kubeconfig("https://"+j.endpoint, caPEM, "default-auth", user)
	if err != nil {
		return err
	}
	if err := writeFile(root, kubeletConfFile, b, 0o600); err != nil {
		return err
	}
	role := "<none>"
	if j.controlPlane {
		role = "control-plane"
	}
	if err := env.AddNode(root, env.Node{Name: j.nodeName, Role: role}); err != nil {
		return err
	}
	fmt.Fprintf(out, "[preflight] Running pre-flight checks\n\nThis node has joined the cluster:\n"+
		"* Certificate signing request was sent to apiserver and a response was received.\n"+
		"* The Kubelet was informed of the new secure connection details.\n")
	return nil
}

// discoverCA stands in for token discovery: with VarCA set it reads the CA the
// "API server" would serve and requires one of the pins to match it. Without
// VarCA there is no CA to check against, and none is written.
func discoverCA(pins []string, unsafeSkip bool) ([]byte, error) {
	path := os.Getenv(env.VarCA)
	if path == "" {
		return nil, nil
	}
	caPEM, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("couldn't validate the identity of the API Server: reading the cluster CA (%s): %w", env.VarCA, err)
	}
	actual, err := pinOf(caPEM)
	if err != nil {
		return nil, fmt.Errorf("couldn't validate the identity of the API Server: %s: %w", path, err)
	}
	if unsafeSkip {
		return caPEM, nil
	}
	for _, p := range pins {
		if strings.EqualFold(p, actual) {
			return caPEM, nil
		}
	}
	return nil, fmt.Errorf("couldn't validate the identity of the API Server: cluster CA found in cluster-info ConfigMap is invalid: none of the public keys %q are pinned", actual)
}
