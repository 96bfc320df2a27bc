package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"
)

// Paths kubeadm's kubelet drop-in (10-kubeadm.conf) hands the kubelet.
const (
	kubeletConfigFile   = "/var/lib/kubelet/config.yaml"
	kubeadmFlagsFile    = "/var/lib/kubelet/kubeadm-flags.env"
	defaultKubeletFile  = "/etc/default/kubelet"
	kubeconfigFile      = "/etc/kubernetes/kubelet.conf"
	bootstrapConfigFile = "/etc/kubernetes/bootstrap-kubelet.conf"
	pkiDir              = "/var/lib/kubelet/pki"
)

// kubeletFileConfig is the part of KubeletConfiguration the stand-in obeys.
type kubeletFileConfig struct {
	StaticPodPath      string `json:"staticPodPath"`
	HealthzBindAddress string `json:"healthzBindAddress"`
	HealthzPort        *int32 `json:"healthzPort"`
	Address            string `json:"address"`
	Port               *int32 `json:"port"`
}

// kubelet is one run of the kubelet half, from a `systemctl start` or
// `restart` to the next stop or restart.
type kubelet struct {
	rt        *containerRuntime
	version   string
	staticDir string
	nodeName  string
	nodeIP    net.IP
	// labels come from --node-labels and are set at registration only, as
	// the real kubelet does.
	labels map[string]string
	// providerID is --provider-id, set at registration only, as the real
	// kubelet does (pkg/kubelet/kubelet_node_status.go initialNode).
	providerID string
	logf       func(string, ...any)
}

// superviseKubelet follows the unit state the systemctl stand-in keeps:
// a file holding a start counter while kubelet is active. Each change of
// counter is a restart, each removal a stop (containers keep running, as
// they do when a real kubelet stops). While a kubelet process lives,
// <stateFile>.running exists: `systemctl stop` waits for it to go, as
// systemd waits for the unit's process to exit, so that the kubelet's
// ports are free when the stop returns (kubeadm reset, then join, saw
// Port-10250 still taken otherwise).
func superviseKubelet(ctx context.Context, stateFile string, rt *containerRuntime, versionOf func() (string, error), logf func(string, ...any)) {
	var (
		current string
		cancel  context.CancelFunc = func() {}
		done                       = make(chan struct{})
	)
	close(done)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		gen := ""
		if b, err := os.ReadFile(stateFile); err == nil {
			gen = strings.TrimSpace(string(b))
		}
		if gen != current {
			cancel()
			<-done
			current = gen
			if gen == "" {
				logf("kubelet stopped")
			} else {
				logf("kubelet started (start #%s)", gen)
				var kctx context.Context
				kctx, cancel = context.WithCancel(ctx)
				done = make(chan struct{})
				running := stateFile + ".running"
				if err := os.WriteFile(running, []byte(gen+"\n"), 0o644); err != nil {
					logf("kubelet: %v", err)
				}
				go func(done chan struct{}) {
					defer close(done)
					defer os.Remove(running)
					// Each start runs the kubelet binary installed now, so
					// an upgraded one reports its own version.
					version, err := versionOf()
					if err != nil {
						logf("kubelet: %v", err)
						<-kctx.Done()
						return
					}
					runKubelet(kctx, rt, version, logf)
				}(done)
			}
		}
		select {
		case <-ctx.Done():
			cancel()
			<-done
			return
		case <-tick.C:
		}
	}
}

// runKubelet is one kubelet process's life: like the real one it cannot
// start before kubeadm wrote its config (systemd would restart it every
// 10 s meanwhile); then it serves healthz, runs static pods, and talks to
// the API server once it has credentials.
func runKubelet(ctx context.Context, rt *containerRuntime, version string, logf func(string, ...any)) {
	var cfg kubeletFileConfig
	for {
		data, err := os.ReadFile(kubeletConfigFile)
		if err == nil {
			if err = yaml.Unmarshal(data, &cfg); err == nil {
				break
			}
		}
		if !errors.Is(err, fs.ErrNotExist) {
			logf("kubelet config: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
	k, err := newKubelet(cfg, rt, version, logf)
	if err != nil {
		logf("kubelet: %v", err)
		<-ctx.Done()
		return
	}
	logf("kubelet running as node %q, node IP %s", k.nodeName, k.nodeIP)
	addr := net.JoinHostPort(orDefault(cfg.HealthzBindAddress, "127.0.0.1"), strconv.Itoa(int(port(cfg.HealthzPort, 10248))))
	srv, err := serveHealthz(addr)
	if err != nil {
		logf("kubelet healthz: %v", err)
		<-ctx.Done()
		return
	}
	api, err := holdPort(net.JoinHostPort(orDefault(cfg.Address, "0.0.0.0"), strconv.Itoa(int(port(cfg.Port, 10250)))))
	if err != nil {
		logf("kubelet server port: %v", err)
		_ = srv.Close()
		<-ctx.Done()
		return
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			k.syncStatic()
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}()
	go func() {
		defer wg.Done()
		k.apiLoop(ctx)
	}()
	<-ctx.Done()
	_ = srv.Close()
	_ = api.Close()
	wg.Wait()
}

func newKubelet(cfg kubeletFileConfig, rt *containerRuntime, version string, logf func(string, ...any)) (*kubelet, error) {
	flags, err := loadFlags(readOptional(kubeadmFlagsFile), readOptional(defaultKubeletFile))
	if err != nil {
		return nil, err
	}
	name := flags["hostname-override"]
	if name == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("reading the hostname: %w", err)
		}
		name = h
	}
	// The kubelet lower-cases the hostname it registers.
	name = strings.ToLower(strings.TrimSpace(name))
	var ip net.IP
	if s := flags["node-ip"]; s != "" {
		if ip = net.ParseIP(strings.Split(s, ",")[0]); ip == nil {
			return nil, fmt.Errorf("--node-ip %q is not an IP", s)
		}
	} else if ip, err = detectNodeIP(); err != nil {
		return nil, err
	}
	labels, err := parseNodeLabels(flags["node-labels"])
	if err != nil {
		return nil, err
	}
	return &kubelet{
		rt: rt, version: version, staticDir: orDefault(cfg.StaticPodPath, "/etc/kubernetes/manifests"),
		nodeName: name, nodeIP: ip, labels: labels, providerID: flags["provider-id"], logf: logf,
	}, nil
}

// detectNodeIP picks the first global IPv4 address of an interface that is
// up, as the kubelet falls back to when --node-ip is not given.
func detectNodeIP() (net.IP, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	for _, i := range ifs {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
				return n.IP.To4(), nil
			}
		}
	}
	return nil, errors.New("no node IP: no interface has a global IPv4 address")
}

func serveHealthz(addr string) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv, nil
}

// holdPort takes the kubelet's server port (10250) for as long as the
// kubelet runs, as the real one does: kubeadm's Port-10250 preflight check
// then refuses to init or join a node whose kubelet is up. Its API is not
// served: every connection is closed at once (no logs, exec or metrics).
func holdPort(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	return ln, nil
}

func readOptional(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return b
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func port(p *int32, def int32) int32 {
	if p == nil || *p == 0 {
		return def
	}
	return *p
}

// parseNodeLabels reads --node-labels ("k=v,k2=v2"). The API server's
// NodeRestriction decides which keys a kubelet may set; this only parses.
func parseNodeLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--node-labels: %q is not key=value", kv)
		}
		out[k] = v
	}
	return out, nil
}
