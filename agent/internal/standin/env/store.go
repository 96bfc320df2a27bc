package env

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A cluster's store is what its etcd holds in the real world: the Nodes,
// the cluster configuration (controlPlaneEndpoint), the kubeadm-certs
// Secret, and which hosts serve it. It lives outside every host's root, as
// data replicated across members does: a control plane whose disk is lost
// (recreated) loses nothing while another member serves. A host serves the
// store its storePointer names; a host without one (an older layout)
// serves a store in its own etcd directory.
const storePointer = etcdDir + "/store"

// ClusterInfo is the cluster configuration kubeadm uploads at init.
type ClusterInfo struct {
	ControlPlaneEndpoint string `json:"controlPlaneEndpoint"`
}

// Certs is the kubeadm-certs Secret: the CA key sealed with the
// certificate key (kubeadm's cryptoutil.EncryptBytes), and when it was
// uploaded; kubeadm's garbage collection deletes it 2 h later.
type Certs struct {
	Uploaded time.Time `json:"uploaded"`
	SealedCA []byte    `json:"sealedCAKey"`
	CACert   []byte    `json:"caCert"`
}

// CertsTTL is kubeadm's DefaultCertTokenDuration.
const CertsTTL = 2 * time.Hour

func storeOf(root string) string {
	b, err := os.ReadFile(Path(root, storePointer))
	if err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b))
	}
	return Path(root, etcdDir)
}

// NewStore makes a cluster store beside the simulated network (or under
// root without one) and makes root serve it.
func NewStore(root string) (*APIServer, error) {
	base := Path(root, etcdDir)
	if dir := os.Getenv(VarNet); dir != "" {
		b := make([]byte, 6)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		base = filepath.Join(dir, ".clusters", hex.EncodeToString(b))
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, err
	}
	a := &APIServer{Root: root, Store: base}
	return a, a.Serve(root)
}

// Serve makes root one of the store's control planes.
func (a *APIServer) Serve(root string) error {
	p := Path(root, storePointer)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(p, []byte(a.store()+"\n"), 0o600); err != nil {
		return err
	}
	return a.locked(func() error {
		hosts, err := a.readHosts()
		if err != nil {
			return err
		}
		if !slices.Contains(hosts, root) {
			hosts = append(hosts, root)
		}
		return a.writeJSON("hosts.json", hosts)
	})
}

// Leave is kubeadm reset on one control plane: root stops serving, and
// the store goes with its last control plane.
func (a *APIServer) Leave(root string) error {
	err := a.locked(func() error {
		hosts, err := a.readHosts()
		if err != nil {
			return err
		}
		hosts = slices.DeleteFunc(hosts, func(h string) bool { return h == root })
		return a.writeJSON("hosts.json", hosts)
	})
	if err != nil {
		return err
	}
	_ = os.Remove(Path(root, storePointer))
	hosts, err := a.readHosts()
	if err == nil && len(hosts) == 0 {
		return os.RemoveAll(a.store())
	}
	return nil
}

func (a *APIServer) readHosts() ([]string, error) {
	var hosts []string
	err := a.readJSON("hosts.json", &hosts)
	return hosts, err
}

// SetCluster and Cluster are the uploaded cluster configuration.
func (a *APIServer) SetCluster(c ClusterInfo) error { return a.writeJSON("cluster.json", c) }

func (a *APIServer) Cluster() (ClusterInfo, error) {
	var c ClusterInfo
	err := a.readJSON("cluster.json", &c)
	return c, err
}

// SetCerts and Certs are the kubeadm-certs Secret; Certs reports none once
// it expired.
func (a *APIServer) SetCerts(c Certs) error { return a.writeJSON("certs.json", c) }

func (a *APIServer) Certs(now time.Time) (*Certs, error) {
	var c Certs
	if err := a.readJSON("certs.json", &c); err != nil {
		return nil, err
	}
	if c.Uploaded.IsZero() || !now.Before(c.Uploaded.Add(CertsTTL)) {
		return nil, nil
	}
	return &c, nil
}

func (a *APIServer) readJSON(name string, v any) error {
	b, err := os.ReadFile(filepath.Join(a.store(), name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	return nil
}

func (a *APIServer) writeJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	p := filepath.Join(a.store(), name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// balancerFile is the local balancer's backends, as the agent seeds it.
const balancerFile = "/var/lib/onekube/lb.json"

// dialBalancer is a loopback endpoint: the calling host's own
// `onekubed lb`, which forwards to the first backend in its file whose
// API server answers (the real one round-robins; any live one serves the
// same cluster). No file means nothing listens there.
func dialBalancer(endpoint string) (*APIServer, error) {
	root, err := Root()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(Path(root, balancerFile))
	if err != nil {
		return nil, &ErrUnreachable{endpoint, "connection refused"}
	}
	var cfg struct {
		Backends []string `json:"backends"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("the balancer's %s: %w", balancerFile, err)
	}
	for _, be := range cfg.Backends {
		if host, _, err := net.SplitHostPort(be); err != nil || strings.HasPrefix(host, "127.") {
			continue // never loop back into a balancer
		}
		if api, err := Dial(be); err == nil {
			return api, nil
		}
	}
	// The balancer accepts and closes: kubeadm sees the connection reset.
	return nil, &ErrUnreachable{endpoint, "connection reset by peer (no backend answered)"}
}
