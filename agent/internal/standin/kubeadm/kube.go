package main

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	bootstrapsecret "k8s.io/cluster-bootstrap/util/secrets"
	bootstraptokenv1 "k8s.io/kubernetes/cmd/kubeadm/app/apis/bootstraptoken/v1"

	"github.com/onekube/onekube/agent/internal/standin/env"
)

// kubeAPI is the real API server of a simulated cluster (env.VarKube).
// With it, init and join do what kubeadm and the kubelet do to an API
// server that the stand-in otherwise only pretends to run:
//   - init creates the InitConfiguration's bootstrap token as kubeadm's
//     bootstrap-token phase does (expiration = now + TTL, by this host's
//     clock), registers the Node with the kubelet's --node-labels, and
//     leaves env.RealAdminConf and kubelet.conf pointing at the real server;
//   - join authenticates with the token, as discovery and the TLS
//     bootstrap do: a deleted token is refused by the real bootstrap
//     authenticator, an expired one by the expiry check kubeadm's
//     discovery relies on (judged by this host's clock, which may be the
//     simulation's virtual one), with kubeadm's words; then it registers
//     the Node and writes a kubelet.conf holding a system:node
//     certificate, the node's own credential.
type kubeAPI struct {
	dir   string
	admin *rest.Config
	cs    kubernetes.Interface
}

// realAPI is nil unless env.VarKube is set.
func realAPI() (*kubeAPI, error) {
	dir := os.Getenv(env.VarKube)
	if dir == "" {
		return nil, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "admin.conf"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", env.VarKube, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &kubeAPI{dir: dir, admin: cfg, cs: cs}, nil
}

func bounded() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// initCluster is the real-server part of kubeadm init.
func (k *kubeAPI) initCluster(root, node string, labels string, tok bootstraptokenv1.BootstrapToken) error {
	ctx, cancel := bounded()
	defer cancel()
	s := bootstraptokenv1.BootstrapTokenToSecret(&tok)
	if tok.TTL != nil {
		// kubeadm stamps expiration with time.Now() of the host; the
		// stand-in's host clock is env.Now.
		s.Data[bootstrapapi.BootstrapTokenExpirationKey] = []byte(env.Now().Add(tok.TTL.Duration).UTC().Format(time.RFC3339))
	}
	if _, err := k.cs.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, s, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return inPhase("bootstrap-token", fmt.Errorf("error creating token: %w", err))
	}
	admin, err := os.ReadFile(filepath.Join(k.dir, "admin.conf"))
	if err != nil {
		return err
	}
	// Beside kubeadm's admin.conf, which names the stand-in's pretend
	// endpoint that the kubectl stand-in reaches over the simulated
	// network: serve in a simulated VM is pointed at this one.
	if err := writeFile(root, env.RealAdminConf, admin, 0o600); err != nil {
		return err
	}
	return k.register(root, node, labels, true)
}

// checkToken is the real-server part of join's discovery.
func (k *kubeAPI) checkToken(token string) error {
	ctx, cancel := bounded()
	defer cancel()
	id, _, _ := strings.Cut(token, ".")
	invalid := inPhase("preflight", fmt.Errorf("couldn't validate the identity of the API Server: could not find a JWS signature in the cluster-info ConfigMap for token ID %q", id))
	cfg := rest.AnonymousClientConfig(k.admin)
	cfg.BearerToken = token
	who, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		if apierrors.IsUnauthorized(err) {
			return invalid
		}
		return inPhase("preflight", fmt.Errorf("couldn't validate the identity of the API Server: %w", err))
	}
	if who.Status.UserInfo.Username != bootstrapapi.BootstrapUserPrefix+id {
		return inPhase("preflight", fmt.Errorf("the token authenticated as %q", who.Status.UserInfo.Username))
	}
	sec, err := k.cs.CoreV1().Secrets(metav1.NamespaceSystem).Get(ctx, bootstraputil.BootstrapTokenSecretName(id), metav1.GetOptions{})
	if err != nil || bootstrapsecret.HasExpired(sec, env.Now()) {
		return invalid
	}
	return nil
}

// register creates the Node as the kubelet does (with its --node-labels
// and kubeadm's control-plane label) and writes kubelet.conf with the
// node's own certificate, signed by the cluster CA.
func (k *kubeAPI) register(root, node, labels string, controlPlane bool) error {
	ctx, cancel := bounded()
	defer cancel()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{"kubernetes.io/hostname": node}}}
	for _, kv := range strings.Split(labels, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k != "" {
			n.Labels[k] = v
		}
	}
	if controlPlane {
		n.Labels["node-role.kubernetes.io/control-plane"] = ""
	}
	if _, err := k.cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return inPhase("kubelet-start", fmt.Errorf("registering node %s: %w", node, err))
	}
	authority, err := k.ca()
	if err != nil {
		return err
	}
	certPEM, keyPEM, err := authority.clientCert("system:node:"+node, "system:nodes")
	if err != nil {
		return err
	}
	b, err := kubeconfig(k.admin.Host, authority.certPEM, "system:node:"+node,
		map[string]any{"client-certificate-data": certPEM, "client-key-data": keyPEM})
	if err != nil {
		return err
	}
	return writeFile(root, kubeletConfFile, b, 0o600)
}

// ca loads the real server's CA (PKCS#8 key, as the loopback bed writes).
func (k *kubeAPI) ca() (*ca, error) {
	certPEM, err := os.ReadFile(filepath.Join(k.dir, "ca.crt"))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(k.dir, "ca.key"))
	if err != nil {
		return nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("the real API server's CA is not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("the real API server's CA key cannot sign")
	}
	return &ca{cert: cert, key: signer, certPEM: certPEM, keyPEM: keyPEM}, nil
}

// keepConfig copies the config a command ran with to env.KeptConfig, so a
// test can hand it to the real kubeadm after the agent removed its own
// copy (the join config holds a token the agent deletes after success).
func keepConfig(root, path, cmd string) {
	b, err := os.ReadFile(env.Resolve(root, path))
	if err != nil {
		return
	}
	_ = writeFile(root, env.KeptConfig(cmd), b, 0o600)
}
