package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	bootstraptokenv1 "k8s.io/kubernetes/cmd/kubeadm/app/apis/bootstraptoken/v1"

	"github.com/onekube/onekube/agent/internal/standin/env"
)

func runInit(args []string, e *env.Entry, out io.Writer) error {
	o, err := parseFlags("init", args, "config", "skip-token-print", "skip-certificate-key-print", "upload-certs", "ignore-preflight-errors")
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
	name := ic.nodeName
	if name == "" {
		name = env.Hostname(root) // kubeadm's default: the hostname, lower-cased
	}
	e.APIVersion, e.KubernetesVersion = c.apiVersion, cc.kubernetesVersion
	e.NodeName, e.NodeIP, e.Endpoint, e.Hostname = name, ic.nodeIP, endpoint, env.Hostname(root)
	e.TokenID, e.Token = tok.Token.ID, tok.Token.String()
	if tok.TTL != nil {
		e.TokenTTL = tok.TTL.Duration.String()
	}
	e.Tainted = &tainted
	fmt.Fprintf(out, "[init] Using Kubernetes version: %s\n", cc.kubernetesVersion)

	if err := initPreflight(root, o.withIgnored(ic.ignore), int(port)); err != nil {
		return err
	}
	hash, err := writeControlPlane(root, c, name, endpoint, out)
	if err != nil {
		return err
	}
	if err := writeManifests(root, cc.kubernetesVersion, advertise); err != nil {
		return inPhase("control-plane", err)
	}
	e.Hash = strings.TrimPrefix(hash, "sha256:")
	e.ControlPlaneEndpoint = cc.controlPlaneEndpoint
	if err := writeKubeletFiles(root, ic.nodeIP); err != nil {
		return inPhase("kubelet-start", err)
	}
	// The control plane is up: its etcd holds the cluster (a store every
	// later control plane shares), its API server answers at the
	// advertised endpoint, and this host's kubelet registers its Node.
	api, err := env.NewStore(root)
	if err != nil {
		return err
	}
	if err := api.SetCluster(env.ClusterInfo{ControlPlaneEndpoint: cc.controlPlaneEndpoint}); err != nil {
		return err
	}
	if err := env.AddMember(peerURL(advertise)); err != nil {
		return inPhase("etcd", err)
	}
	if o.uploadCerts {
		if ic.certKey == "" {
			return errors.New("the stand-in wants certificateKey in the InitConfiguration with --upload-certs: kubeadm would print a generated key")
		}
		if err := uploadCerts(root, api, ic.certKey, time.Now()); err != nil {
			return inPhase("upload-certs", err)
		}
		e.Uploaded = true
		printKey(out, o, ic.certKey)
	}
	if err := env.StartAPIServer(root, endpoint); err != nil {
		return err
	}
	if err := api.Register(env.Node{Name: name, Role: "control-plane", Host: root, IP: ic.nodeIP}, false); err != nil {
		return inPhase("kubelet-start", err)
	}
	if err := env.StartKubelet(root, name, root); err != nil {
		return err
	}
	// wait-control-plane, where init spends its time: a kill now leaves
	// the files and a running control plane, as a killed kubeadm does.
	if err := env.Delay(); err != nil {
		return err
	}
	if api, err := realAPI(); err != nil {
		return err
	} else if api != nil {
		if err := api.initCluster(root, name, ic.nodeLabels, tok); err != nil {
			return err
		}
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

	// bootstrap-token: the Secrets, which cluster-info is then signed with.
	if err := api.AddTokens(bootstrapTokens(ic.tokens)...); err != nil {
		return inPhase("bootstrap-token", err)
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

// writeControlPlane writes the CA (or uses the one there, as kubeadm's
// certs phase does), the kubeconfigs (keeping one that trusts this CA,
// refusing one that does not, as its kubeconfig phase does), and returns
// the CA's pin; writeManifests writes the static pods.
func writeControlPlane(root string, c *config, name, endpoint string, out io.Writer) (string, error) {
	authority, err := loadCA(root)
	switch {
	case err != nil:
		return "", inPhase("certs", fmt.Errorf("failure loading ca certificate: %w", err))
	case authority != nil:
		fmt.Fprintln(out, `[certs] Using the existing "ca" certificate and key`)
	default:
		fmt.Fprintln(out, `[certs] Generating "ca" certificate and key`)
		if authority, err = newCA(c.cluster.encryptionAlgorithm); err != nil {
			return "", inPhase("certs", err)
		}
		if err := writeFile(root, caCertFile, authority.certPEM, 0o644); err != nil {
			return "", inPhase("certs", err)
		}
		if err := writeFile(root, caKeyFile, authority.keyPEM, 0o600); err != nil {
			return "", inPhase("certs", err)
		}
	}
	server := "https://" + endpoint
	if cpe := c.cluster.controlPlaneEndpoint; cpe != "" {
		server = "https://" + cpe
	}
	for _, kc := range []struct{ file, cn, org string }{
		{adminConfFile, "kubernetes-admin", "kubeadm:cluster-admins"},
		{superAdminConf, "kubernetes-super-admin", "system:masters"},
		{kubeletConfFile, "system:node:" + name, "system:nodes"},
		{controllerMgrConf, "system:kube-controller-manager", ""},
		{schedulerConf, "system:kube-scheduler", ""},
	} {
		if ok, err := trustsCA(root, kc.file, authority.certPEM); err != nil {
			return "", inPhase("kubeconfig", err)
		} else if ok {
			fmt.Fprintf(out, "[kubeconfig] Using existing kubeconfig file: %q\n", kc.file)
			continue
		}
		var orgs []string
		if kc.org != "" {
			orgs = []string{kc.org}
		}
		certPEM, keyPEM, err := authority.clientCert(kc.cn, orgs...)
		if err != nil {
			return "", inPhase("kubeconfig", err)
		}
		user := map[string]any{"client-certificate-data": certPEM, "client-key-data": keyPEM}
		b, err := kubeconfig(server, authority.certPEM, kc.cn, user)
		if err != nil {
			return "", inPhase("kubeconfig", err)
		}
		if err := writeFile(root, kc.file, b, 0o600); err != nil {
			return "", inPhase("kubeconfig", err)
		}
	}
	return pinOf(authority.certPEM)
}

// bootstrapTokens turns init's tokens into what the API server keeps:
// kubeadm's default TTL is 24h, and a TTL of 0 never expires.
func bootstrapTokens(ts []bootstraptokenv1.BootstrapToken) []env.Token {
	var out []env.Token
	for _, t := range ts {
		if t.Token == nil {
			continue
		}
		tok := env.Token{ID: t.Token.ID, Secret: t.Token.Secret}
		switch {
		case t.Expires != nil:
			tok.Expires = t.Expires.Time
		case t.TTL == nil:
			tok.Expires = time.Now().Add(24 * time.Hour)
		case t.TTL.Duration > 0:
			tok.Expires = time.Now().Add(t.TTL.Duration)
		}
		out = append(out, tok)
	}
	return out
}
