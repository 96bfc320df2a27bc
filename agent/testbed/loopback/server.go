package loopback

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options choose what runs beside etcd and the API server.
type Options struct {
	// ControllerManager also runs kube-controller-manager with kubeadm's
	// controller set (`*,bootstrapsigner,tokencleaner`): token signing and
	// cleaning, CSR approval and signing, PDB status, garbage collection.
	ControllerManager bool
}

// Server is a running control plane on loopback.
type Server struct {
	Dir string
	// URL is the API server's https URL.
	URL string
	// Config authenticates as an admin (group system:masters).
	Config *rest.Config
	// Kubeconfig is the path of the same admin credential as a file.
	Kubeconfig string
	// CAPEM is the cluster CA; CAKey signs with it (tests that issue
	// client certificates the way a master does).
	CAPEM []byte
	pki   *pki
	procs []*proc
}

// Start brings up a control plane for t and stops it when t ends. It
// skips t when the binaries are missing, unless CI=true.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	bins, err := FindBinaries()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("loopback control plane: %v", err)
		}
		t.Skipf("loopback control plane: %v", err)
	}
	s, err := start(t.TempDir(), bins, o)
	if s != nil {
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("control-plane logs:\n%s", s.Logs())
			}
			s.Stop()
		})
	}
	if err != nil {
		t.Fatalf("loopback control plane: %v", err)
	}
	return s
}

func start(dir string, bins Binaries, o Options) (*Server, error) {
	p, err := newPKI(dir)
	if err != nil {
		return nil, err
	}
	if _, _, err := p.issue("apiserver", "kube-apiserver", nil,
		[]net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(10, 96, 0, 1)},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}, true); err != nil {
		return nil, err
	}
	adminCert, adminKey, err := p.issue("admin", "loopback-admin", []string{"system:masters"}, nil, nil, false)
	if err != nil {
		return nil, err
	}
	if err := p.serviceAccountKeys(); err != nil {
		return nil, err
	}
	ports, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	etcdClient, etcdPeer, apiPort, kcmPort := ports[0], ports[1], ports[2], ports[3]
	s := &Server{Dir: dir, URL: "https://127.0.0.1:" + strconv.Itoa(apiPort), CAPEM: p.CAPEM, pki: p}
	s.Config = &rest.Config{
		Host:            s.URL,
		TLSClientConfig: rest.TLSClientConfig{CAData: p.CAPEM, CertData: adminCert, KeyData: adminKey},
		QPS:             200,
		Burst:           400,
	}
	if s.Kubeconfig, err = writeKubeconfig(dir, "admin.conf", s.URL, p.CAPEM, adminCert, adminKey); err != nil {
		return nil, err
	}

	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdClient)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(etcdPeer)
	etcd, err := startProc(dir, "etcd", bins.Etcd,
		"--name=loopback", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=loopback="+peerURL, "--unsafe-no-fsync", "--log-level=warn")
	if err != nil {
		return s, err
	}
	s.procs = append(s.procs, etcd)

	api, err := startProc(dir, "kube-apiserver", bins.APIServer,
		"--etcd-servers="+etcdURL, "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(apiPort),
		"--advertise-address=127.0.0.1", "--endpoint-reconciler-type=none",
		"--tls-cert-file="+p.path("apiserver.crt"), "--tls-private-key-file="+p.path("apiserver.key"),
		"--client-ca-file="+p.path("ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+p.path("sa.pub"), "--service-account-signing-key-file="+p.path("sa.key"),
		"--service-cluster-ip-range=10.96.0.0/12", "--authorization-mode=Node,RBAC",
		"--enable-bootstrap-token-auth", "--enable-admission-plugins=NodeRestriction",
		"--cert-dir="+filepath.Join(dir, "certs"))
	if err != nil {
		return s, err
	}
	s.procs = append(s.procs, api)
	if err := s.waitReady(api, 90*time.Second); err != nil {
		return s, err
	}
	if o.ControllerManager {
		kcm, err := startProc(dir, "kube-controller-manager", bins.ControllerManager,
			"--kubeconfig="+s.Kubeconfig, "--authentication-kubeconfig="+s.Kubeconfig,
			"--authorization-kubeconfig="+s.Kubeconfig, "--bind-address=127.0.0.1",
			"--secure-port="+strconv.Itoa(kcmPort), "--leader-elect=false",
			"--controllers=*,bootstrapsigner,tokencleaner", "--use-service-account-credentials=true",
			"--service-account-private-key-file="+p.path("sa.key"), "--root-ca-file="+p.path("ca.crt"),
			"--cluster-signing-cert-file="+p.path("ca.crt"), "--cluster-signing-key-file="+p.path("ca.key"))
		if err != nil {
			return s, err
		}
		s.procs = append(s.procs, kcm)
	}
	return s, nil
}

// waitReady polls /readyz until the API server answers ok.
func (s *Server) waitReady(api *proc, limit time.Duration) error {
	cs, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(limit)
	for {
		if done, werr := api.exited(); done {
			return fmt.Errorf("kube-apiserver exited: %v", werr)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		cancel()
		if err == nil && strings.TrimSpace(string(body)) == "ok" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-apiserver not ready after %s: %v", limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Client is a clientset for the admin Config.
func (s *Server) Client(t testing.TB) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// SignClient issues a client certificate from the cluster CA (as a master
// holding ca.key can) and returns a Config authenticating with it.
func (s *Server) SignClient(cn string, groups ...string) (*rest.Config, error) {
	name := "client-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	cert, key, err := s.pki.issue(name, cn, groups, nil, nil, false)
	if err != nil {
		return nil, err
	}
	return &rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{CAData: s.CAPEM, CertData: cert, KeyData: key}}, nil
}

// CAKeyPath is the CA private key file, as /etc/kubernetes/pki/ca.key on
// a master.
func (s *Server) CAKeyPath() string { return s.pki.path("ca.key") }

// CACertPath is the CA certificate file.
func (s *Server) CACertPath() string { return s.pki.path("ca.crt") }

// Logs returns the tail of every process's log.
func (s *Server) Logs() string {
	var b strings.Builder
	for _, p := range s.procs {
		fmt.Fprintf(&b, "--- %s (%s)\n%s\n", p.name, p.log, p.tail(40))
	}
	return b.String()
}

// StopEtcd stops etcd alone: the API server keeps accepting connections
// with its storage gone (readiness tests).
func (s *Server) StopEtcd() {
	for _, p := range s.procs {
		if p.name == "etcd" {
			p.stop(10 * time.Second)
		}
	}
}

// Stop ends every process, the API server first.
func (s *Server) Stop() {
	for i := len(s.procs) - 1; i >= 0; i-- {
		s.procs[i].stop(10 * time.Second)
	}
}

func writeKubeconfig(dir, name, url string, ca, cert, key []byte) (string, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["loopback"] = &clientcmdapi.Cluster{Server: url, CertificateAuthorityData: ca}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts["admin@loopback"] = &clientcmdapi.Context{Cluster: "loopback", AuthInfo: "admin"}
	cfg.CurrentContext = "admin@loopback"
	path := filepath.Join(dir, name)
	return path, clientcmd.WriteToFile(*cfg, path)
}

// freePorts reserves n loopback ports by listening and closing; a port
// taken again in between makes a process fail to start, which the caller
// sees in its log.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, errors.Join(errors.New("reserving ports"), err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
