package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/onekube/onekube/agent/system"
)

// Static pods kubeadm writes on a stacked master, in the order they are
// restarted after a renewal: etcd first, so the apiserver comes back to a
// healthy store, then the apiserver, then its clients.
const (
	ManifestsDir = "/etc/kubernetes/manifests"
	// HeldManifestsDir is where a manifest waits while its pod is down: it
	// must be outside ManifestsDir, which the kubelet watches. A manifest
	// found here at the start of a tick (serve died mid-restart) is put
	// back first.
	HeldManifestsDir = "/etc/kubernetes/onekube-held-manifests"
)

// ControlPlaneManifests are the static pods restarted, in order.
var ControlPlaneManifests = []string{"etcd.yaml", "kube-apiserver.yaml", "kube-controller-manager.yaml", "kube-scheduler.yaml"}

// StaticPods restarts kubeadm's static pods through the kubelet, the way
// kubeadm's docs say to after `certs renew` ("move the manifests out for
// at least fileCheckFrequency, 20 s"): the manifest leaves the watched
// directory, the pod's own probe endpoint is watched until it stops
// answering (the kubelet has stopped it), the manifest comes back, and the
// endpoint is watched until it answers again.
type StaticPods struct {
	Root  system.Root
	Clock system.Clock
	// Health answers whether url is healthy (nil) now; default: a GET
	// that wants 200 within 5 s.
	Health func(ctx context.Context, url string) error
	// DownWait bounds the wait for the pod to stop (default 90 s), UpWait
	// for it to be healthy again (default 3 min); Poll is the probe
	// interval (default 1 s).
	DownWait, UpWait, Poll time.Duration
}

// Recover puts back any manifest a previous run left held.
func (s *StaticPods) Recover() error {
	held, err := os.ReadDir(s.Root.Path(HeldManifestsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range held {
		if e.IsDir() {
			continue
		}
		if err := s.putBack(e.Name()); err != nil {
			return err
		}
	}
	return nil
}

func (s *StaticPods) putBack(name string) error {
	held := s.Root.Path(filepath.Join(HeldManifestsDir, name))
	if _, err := os.Stat(held); errors.Is(err, fs.ErrNotExist) {
		return nil // put back already
	}
	dst := s.Root.Path(filepath.Join(ManifestsDir, name))
	if _, err := os.Stat(dst); err == nil {
		// A newer manifest is in place (kubeadm upgrade?): it wins.
		return os.Remove(held)
	}
	if err := os.Rename(held, dst); err != nil {
		return fmt.Errorf("putting back the manifest %s: %w", name, err)
	}
	return nil
}

// RestartAll restarts every control-plane static pod present, one at a
// time; before, when set, runs before each (the caller refreshes its
// lease there).
func (s *StaticPods) RestartAll(ctx context.Context, before func(name string) error) error {
	for _, name := range ControlPlaneManifests {
		if ok, _ := s.Root.Exists(filepath.Join(ManifestsDir, name)); !ok {
			continue
		}
		if before != nil {
			if err := before(name); err != nil {
				return err
			}
		}
		if err := s.Restart(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// Restart restarts one static pod and waits until it is healthy. The
// manifest is back in place whatever happens, so a failed restart leaves
// the kubelet running the pod as before.
func (s *StaticPods) Restart(ctx context.Context, name string) (err error) {
	s.defaults()
	manifest := filepath.Join(ManifestsDir, name)
	b, err := s.Root.ReadFile(manifest)
	if err != nil {
		return err
	}
	url, err := ProbeURL(b)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := s.Root.MkdirAll(HeldManifestsDir, 0o700); err != nil {
		return err
	}
	if err := os.Rename(s.Root.Path(manifest), s.Root.Path(filepath.Join(HeldManifestsDir, name))); err != nil {
		return fmt.Errorf("moving %s out: %w", name, err)
	}
	defer func() {
		if perr := s.putBack(name); perr != nil && err == nil {
			err = perr
		}
	}()
	if !s.waitFor(ctx, url, false, s.DownWait) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the kubelet did not stop %s within %s of its manifest leaving %s (%s still answers)", name, s.DownWait, ManifestsDir, url)
	}
	if err := s.putBack(name); err != nil {
		return err
	}
	if !s.waitFor(ctx, url, true, s.UpWait) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s is not healthy within %s of its restart (%s)", name, s.UpWait, url)
	}
	return nil
}

// waitFor polls url until its health is want, for at most limit.
func (s *StaticPods) waitFor(ctx context.Context, url string, want bool, limit time.Duration) bool {
	deadline := s.Clock.Now().Add(limit)
	for {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		healthy := s.Health(pctx, url) == nil
		cancel()
		if healthy == want {
			return true
		}
		if !s.Clock.Now().Before(deadline) || s.Clock.Sleep(ctx, s.Poll) != nil {
			return false
		}
	}
}

func (s *StaticPods) defaults() {
	if s.Clock == nil {
		s.Clock = system.RealClock{}
	}
	if s.Health == nil {
		s.Health = httpHealth
	}
	if s.DownWait <= 0 {
		s.DownWait = 90 * time.Second
	}
	if s.UpWait <= 0 {
		s.UpWait = 3 * time.Minute
	}
	if s.Poll <= 0 {
		s.Poll = time.Second
	}
}

// ProbeURL is the health endpoint of a static pod, from its manifest's
// own probe (startup, then readiness, then liveness), as kubeadm's
// wait-control-plane reads it. kubeadm's pods are hostNetwork, so an
// empty host is this machine.
func ProbeURL(manifest []byte) (string, error) {
	var pod corev1.Pod
	if err := yaml.Unmarshal(manifest, &pod); err != nil {
		return "", fmt.Errorf("parsing the manifest: %w", err)
	}
	if len(pod.Spec.Containers) == 0 {
		return "", errors.New("the manifest has no container")
	}
	c := pod.Spec.Containers[0]
	for _, p := range []*corev1.Probe{c.StartupProbe, c.ReadinessProbe, c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil {
			continue
		}
		g := p.HTTPGet
		port, err := probePort(c, g.Port)
		if err != nil {
			return "", err
		}
		host := g.Host
		if host == "" {
			host = "127.0.0.1"
		}
		scheme := "http"
		if g.Scheme == corev1.URISchemeHTTPS {
			scheme = "https"
		}
		path := g.Path
		if path == "" || path[0] != '/' {
			path = "/" + path
		}
		return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port)) + path, nil
	}
	return "", errors.New("the manifest has no HTTP probe to watch")
}

// probePort resolves a probe's port as the kubelet does (pkg/kubelet/
// prober/prober.go, findPortByName): a number, or the name of one of the
// container's ports. kubeadm names its probes' port "probe-port"
// (constants.go ProbePort; phases/controlplane/manifests.go).
func probePort(c corev1.Container, p intstr.IntOrString) (int, error) {
	port := p.IntValue()
	if p.Type == intstr.String {
		port = 0
		for _, cp := range c.Ports {
			if cp.Name == p.StrVal {
				port = int(cp.ContainerPort)
				break
			}
		}
		if port == 0 {
			return 0, fmt.Errorf("the probe's port %q names no port of the container", p.StrVal)
		}
	}
	if port <= 0 || port > 65535 {
		return 0, fmt.Errorf("the probe's port %q is not a TCP port", p.String())
	}
	return port, nil
}

// httpHealth wants 200. The certificate is not verified, as in kubeadm's
// own control-plane waiter (cmd/kubeadm/app/util/apiclient/wait.go): the
// answer is a health bit on this machine, and the serving certificate is
// what is being replaced.
func httpHealth(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true} //nolint:gosec // see above
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}
