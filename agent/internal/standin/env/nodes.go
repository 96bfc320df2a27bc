package env

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The simulated network and API server. Each simulated VM is its own host
// with its own root; VarNet names a directory where the entry <ip> links to
// the root of the host that has that address. A host runs an API server
// while its root holds kube-apiserver's static pod (kubeadm init writes it,
// reset removes it), and that API server's Node objects live in its etcd
// directory, so resetting the control plane loses them as it would. Every
// kubeadm and kubectl stand-in of every host sees the same Nodes, as every
// real one sees the API server's: that is what lets join refuse a duplicate
// node name the way kubeadm does.

// Paths on a host, joined to its root.
const (
	APIServerManifest = "/etc/kubernetes/manifests/kube-apiserver.yaml"
	etcdDir           = "/var/lib/etcd/onekube-standin"
	endpointFile      = etcdDir + "/endpoint"
	// kubeletFile names the node this host's kubelet runs as and the root
	// of the API server it registered with; it exists while the kubelet
	// runs (init or join wrote it, reset removed it).
	kubeletFile = StateDir + "/kubelet"
)

// Node is one Node object: its name, roles, and the host (root) whose
// kubelet registered it.
type Node struct {
	Name string `json:"name"`
	Role string `json:"role"`
	Host string `json:"host"`
	IP   string `json:"ip,omitempty"`
	// StoppedAt is when the kubelet that registered the Node stopped
	// (kubeadm reset, or its host destroyed); zero while it runs.
	StoppedAt time.Time `json:"stopped_at,omitzero"`
}

// Ready reports what the Node's Ready condition would say: Ready while its
// kubelet runs on the host that registered it, and for NodeGrace() after
// that kubelet stopped. The node lifecycle controller marks a Node
// NotReady only after node-monitor-grace-period without a heartbeat (50 s
// in 1.36 and 1.37), and real kubeadm refuses to join under a Ready Node's name
// meanwhile: the real bed showed it for a worker re-joining right after
// its own `kubeadm reset`. A host that vanished without its kubelet's
// stop recorded counts as long gone.
func (n Node) Ready() bool {
	if name, _, ok := readKubelet(n.Host); ok && name == n.Name {
		return true
	}
	return !n.StoppedAt.IsZero() && time.Since(n.StoppedAt) < NodeGrace()
}

// NodeGrace is how long a Node stays Ready after its kubelet stopped:
// VarNodeGrace, else the controller manager's default
// node-monitor-grace-period, 50 s (pkg/controller/nodelifecycle/config/
// v1alpha1/defaults.go); a value that does not parse counts as unset.
func NodeGrace() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(VarNodeGrace)); err == nil && d >= 0 {
		return d
	}
	return DefaultNodeGrace
}

// APIServer is a running API server: the root of the host that runs it,
// and the cluster store it serves (store.go): every control plane of a
// cluster serves the same one, as they share etcd.
type APIServer struct{ Root, Store string }

// ServerOf is the API server of a control-plane host root.
func ServerOf(root string) *APIServer {
	return &APIServer{Root: root, Store: storeOf(root)}
}

// ErrUnreachable is a dial error as a client would see it.
type ErrUnreachable struct{ Endpoint, Why string }

func (e *ErrUnreachable) Error() string {
	return fmt.Sprintf("dial tcp %s: connect: %s", e.Endpoint, e.Why)
}

// Dial finds the API server at endpoint ("ip:port") on the simulated
// network: no host with that address is "no route to host", a host without
// an API server (or on another port) is "connection refused".
func Dial(endpoint string) (*APIServer, error) {
	host, _, err := net.SplitHostPort(endpoint)
	if err != nil {
		return nil, err
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
		return dialBalancer(endpoint)
	}
	dir := os.Getenv(VarNet)
	if dir == "" {
		return nil, fmt.Errorf("%s is not set: the stand-in has no network to reach %s on", VarNet, endpoint)
	}
	root, err := filepath.EvalSymlinks(filepath.Join(dir, host))
	if err != nil {
		return nil, &ErrUnreachable{endpoint, "no route to host"}
	}
	if !fileExists(Path(root, APIServerManifest)) {
		return nil, &ErrUnreachable{endpoint, "connection refused"}
	}
	if b, err := os.ReadFile(Path(root, endpointFile)); err != nil || strings.TrimSpace(string(b)) != endpoint {
		return nil, &ErrUnreachable{endpoint, "connection refused"}
	}
	return ServerOf(root), nil
}

// StartAPIServer records that root now serves at endpoint (kubeadm init).
func StartAPIServer(root, endpoint string) error {
	p := Path(root, endpointFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(endpoint+"\n"), 0o600)
}

// CA is the cluster CA the API server hands out in cluster-info.
func (a *APIServer) CA() ([]byte, error) {
	return os.ReadFile(Path(a.Root, "/etc/kubernetes/pki/ca.crt"))
}

func (a *APIServer) store() string {
	if a.Store == "" {
		return storeOf(a.Root)
	}
	return a.Store
}

// Nodes lists the Node objects.
func (a *APIServer) Nodes() ([]Node, error) {
	var out []Node
	err := a.locked(func() error {
		var err error
		out, err = a.read()
		return err
	})
	return out, err
}

// Register adds or takes over the Node n. For a join (kubelet-start) a
// Node of that name that is Ready is refused with kubeadm's own words
// (cmd/kubeadm/app/cmd/phases/join/kubelet.go); a NotReady one is taken
// over by n's kubelet, as a real kubelet would. init does no such check.
func (a *APIServer) Register(n Node, join bool) error {
	return a.locked(func() error {
		nodes, err := a.read()
		if err != nil {
			return err
		}
		i := slices.IndexFunc(nodes, func(o Node) bool { return o.Name == n.Name })
		if join && i >= 0 && nodes[i].Ready() {
			return fmt.Errorf("a Node with name %q and status %q already exists in the cluster. "+
				"You must delete the existing Node or change the name of this new joining Node", n.Name, "Ready")
		}
		if i >= 0 {
			nodes = slices.Delete(nodes, i, i+1)
		}
		return a.write(append(nodes, n))
	})
}

func (a *APIServer) read() ([]Node, error) {
	b, err := os.ReadFile(filepath.Join(a.store(), "nodes.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var nodes []Node
	if err := json.Unmarshal(b, &nodes); err != nil {
		return nil, fmt.Errorf("reading the Node list: %w", err)
	}
	return nodes, nil
}

func (a *APIServer) write(nodes []Node) error {
	b, err := json.MarshalIndent(nodes, "", "  ")
	if err != nil {
		return err
	}
	p := filepath.Join(a.store(), "nodes.json")
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// locked runs f holding the API server's lock: joins on many hosts run at
// once, as they do against a real one.
func (a *APIServer) locked(f func() error) error {
	p := filepath.Join(a.store(), "lock")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	l, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer l.Close()
	if err := syscall.Flock(int(l.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer func() { _ = syscall.Flock(int(l.Fd()), syscall.LOCK_UN) }()
	return f()
}

// StartKubelet records that root's kubelet runs as node name, registered
// with the API server of the host api.
func StartKubelet(root, name, api string) error {
	p := Path(root, kubeletFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(name+"\n"+api+"\n"), 0o644)
}

// KubeletRunning reports whether root's kubelet runs (it holds :10250).
func KubeletRunning(root string) bool {
	_, _, ok := readKubelet(root)
	return ok
}

// StopKubelet records that root's kubelet no longer runs (kubeadm reset,
// or the host destroyed): its Node's heartbeats stop now, which the API
// server it registered with notes (see Node.Ready).
func StopKubelet(root string) error {
	name, api, ok := readKubelet(root)
	if !ok {
		return nil
	}
	if api != "" {
		if err := (&APIServer{Root: api}).stopped(name, root, time.Now()); err != nil {
			return err
		}
	}
	err := os.Remove(Path(root, kubeletFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// readKubelet reads root's kubelet file: its node name and API server.
func readKubelet(root string) (name, api string, ok bool) {
	b, err := os.ReadFile(Path(root, kubeletFile))
	if err != nil {
		return "", "", false
	}
	name, api, _ = strings.Cut(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(name), strings.TrimSpace(api), true
}

// stopped records that the kubelet on host which registered Node name
// stopped at t. An API server whose data is gone (reset) has nothing to
// record.
func (a *APIServer) stopped(name, host string, t time.Time) error {
	if !fileExists(filepath.Join(a.store(), "nodes.json")) {
		return nil
	}
	return a.locked(func() error {
		nodes, err := a.read()
		if err != nil {
			return err
		}
		i := slices.IndexFunc(nodes, func(o Node) bool { return o.Name == name && o.Host == host })
		if i < 0 || !nodes[i].StoppedAt.IsZero() {
			return nil
		}
		nodes[i].StoppedAt = t
		return a.write(nodes)
	})
}

// Serving reports whether root runs a control plane: kube-apiserver's
// static pod is there and init started it (its ports, 2379/2380 and
// 10257/10259 with it, are taken).
func Serving(root string) bool {
	return fileExists(Path(root, APIServerManifest)) && fileExists(Path(root, endpointFile))
}

// Hostname is the host's kernel hostname (lower-cased, as kubeadm's default
// node name is), read from <root>/proc/sys/kernel/hostname; "" if unknown.
func Hostname(root string) string {
	b, err := os.ReadFile(Path(root, "/proc/sys/kernel/hostname"))
	if err != nil {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(string(b)))
}

// APIServerEndpoint is the endpoint root's API server serves, "" for none.
func APIServerEndpoint(root string) string {
	b, err := os.ReadFile(Path(root, endpointFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
