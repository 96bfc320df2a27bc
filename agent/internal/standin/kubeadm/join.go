package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

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
	keepConfig(root, o.config, "join")
	if err := validateJoin(c); err != nil {
		return err
	}
	j := c.join
	name := j.nodeName
	if name == "" {
		name = env.Hostname(root) // kubeadm's default: the hostname, lower-cased
	}
	e.APIVersion, e.NodeName, e.NodeIP, e.Endpoint, e.Hostname = c.apiVersion, name, j.nodeIP, j.endpoint, env.Hostname(root)
	e.TokenID, _, _ = strings.Cut(j.token, ".")
	e.Token, e.ControlPlane = j.token, j.controlPlane
	if len(j.hashes) > 0 {
		e.Hash = strings.ToLower(strings.TrimPrefix(j.hashes[0], "sha256:"))
	}
	tainted := j.taints == nil && j.controlPlane
	e.Tainted = &tainted

	if err := joinPreflight(root, o.withIgnored(j.ignore), j.controlPlane); err != nil {
		return err
	}
	// An injected failure stands for discovery failing before anything
	// is written; it fails at once, where kubeadm's discovery would retry.
	if fail, err := env.ShouldFail(root, "join"); err != nil || fail {
		if err != nil {
			return err
		}
		return inPhase("preflight", fmt.Errorf("couldn't validate the identity of the API Server: failed to request the cluster-info ConfigMap: Get \"https://%s/api/v1/namespaces/kube-public/configmaps/cluster-info?timeout=10s\": dial tcp %s: connect: connection refused (injected by %s)", j.endpoint, j.endpoint, env.VarFail))
	}
	// With a real API server behind the stand-ins (ONEKUBE_STANDIN_KUBE),
	// tokens live there (serve mints them), and it judges them.
	live, err := realAPI()
	if err != nil {
		return err
	}
	api, caPEM, err := discover(j, live == nil)
	if err != nil {
		return inPhase("preflight", fmt.Errorf("couldn't validate the identity of the API Server: %w", err))
	}
	if j.controlPlane {
		if err := joinControlPlane(root, api, j, env.Version(), time.Now()); err != nil {
			return err
		}
	}
	if live != nil {
		if err := live.checkToken(j.token); err != nil {
			return err
		}
	}
	// kubelet-start writes the bootstrap kubeconfig and the CA (unless
	// one is there), then looks for a Ready Node of this name before the
	// TLS bootstrap; a refusal leaves those two files, so a retry needs
	// kubeadm reset first (cmd/kubeadm/app/cmd/phases/join/kubelet.go).
	boot, err := kubeconfig("https://"+j.endpoint, caPEM, "tls-bootstrap-token-user", map[string]any{"token": j.token})
	if err != nil {
		return err
	}
	if err := writeFile(root, bootstrapConf, boot, 0o600); err != nil {
		return err
	}
	if !fileExists(env.Path(root, caCertFile)) {
		if err := writeFile(root, caCertFile, caPEM, 0o644); err != nil {
			return err
		}
	}
	role := "<none>"
	if j.controlPlane {
		role = "control-plane"
	}
	if err := api.Register(env.Node{Name: name, Role: role, Host: root, IP: j.nodeIP}, true); err != nil {
		return inPhase("kubelet-start", err)
	}
	if err := writeKubeletFiles(root, j.nodeIP); err != nil {
		return inPhase("kubelet-start", err)
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
	if err := env.StartKubelet(root, name, api.Root); err != nil {
		return err
	}
	if live != nil {
		if err := live.register(root, name, j.nodeLabels, j.controlPlane); err != nil {
			return err
		}
	}
	// kubelet-wait-bootstrap, where join spends its time: the kubelet (a
	// service of its own) completes its TLS bootstrap and registers the
	// Node whether kubeadm lives or not, so a kill now leaves a joined
	// node with bootstrap-kubelet.conf still there.
	if err := env.Delay(); err != nil {
		return err
	}
	_ = os.Remove(env.Path(root, bootstrapConf)) // kubeadm's deferred clean-up
	fmt.Fprintf(out, "[preflight] Running pre-flight checks\n\nThis node has joined the cluster:\n"+
		"* Certificate signing request was sent to apiserver and a response was received.\n"+
		"* The Kubelet was informed of the new secure connection details.\n")
	return nil
}

// Discovery's pace: kubeadm polls cluster-info every 5 s until its
// discovery timeout, 5 min unless the config sets one
// (cmd/kubeadm/app/constants: DiscoveryRetryInterval, DiscoveryTimeout).
const (
	discoveryInterval = 5 * time.Second
	discoveryTimeout  = 5 * time.Minute
)

// discover stands in for token discovery: it polls the API server at the
// endpoint until cluster-info carries a signature for the token's ID (an
// unreachable server, and a token unknown or expired there, are retried
// until the timeout, as kubeadm's getClusterInfo does), then checks the
// signature's secret and pins the CA, in kubeadm's order
// (cmd/kubeadm/app/discovery/token/token.go).
func discover(j *joinView, storeTokens bool) (*env.APIServer, []byte, error) {
	id, secret, _ := strings.Cut(j.token, ".")
	timeout := j.discoveryTimeout
	if timeout <= 0 {
		timeout = discoveryTimeout
	}
	deadline := time.Now().Add(timeout)
	for {
		api, err := env.Dial(j.endpoint)
		var tok env.Token
		var signed bool
		if err == nil && storeTokens {
			tok, signed, err = api.SignedFor(id)
		} else if err == nil {
			tok, signed = env.Token{Secret: secret}, true
		}
		switch {
		case err != nil:
			err = fmt.Errorf("failed to request the cluster-info ConfigMap: Get \"https://%s/api/v1/namespaces/kube-public/configmaps/cluster-info?timeout=10s\": %w", j.endpoint, err)
		case !signed:
			err = fmt.Errorf("could not find a JWS signature in the cluster-info ConfigMap for token ID %q", id)
		case tok.Secret != secret:
			return nil, nil, errors.New("failed to verify JWS signature of received cluster info object, can't trust this API Server")
		default:
			caPEM, err := discoverCA(api, j.hashes, j.unsafeSkipCA)
			return api, caPEM, err
		}
		if !time.Now().Add(discoveryInterval).Before(deadline) {
			return nil, nil, err
		}
		time.Sleep(discoveryInterval)
	}
}

// discoverCA stands in for token discovery: the API server hands out its
// CA (cluster-info), and one of the pins must match it, unless the config
// skips verification.
func discoverCA(api *env.APIServer, pins []string, unsafeSkip bool) ([]byte, error) {
	caPEM, err := api.CA()
	if err != nil {
		return nil, fmt.Errorf("reading cluster-info: %w", err)
	}
	actual, err := pinOf(caPEM)
	if err != nil {
		return nil, err
	}
	if unsafeSkip {
		return caPEM, nil
	}
	for _, p := range pins {
		if strings.EqualFold(p, actual) {
			return caPEM, nil
		}
	}
	return nil, fmt.Errorf("cluster CA found in cluster-info ConfigMap is invalid: none of the public keys %q are pinned", actual)
}
