package lb

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/testbed/loopback"
)

// TestReadyzAgainstARealAPIServer: a real kube-apiserver, probed with no
// credential and its CA pinned, is up; once its etcd stops it still
// accepts connections (a TCP connect would call it healthy), and the
// balancer marks it down within a few probes.
func TestReadyzAgainstARealAPIServer(t *testing.T) {
	s := loopback.Start(t, loopback.Options{})
	var logs lockedLog
	b := &Balancer{CAFile: s.CACertPath(), Log: slog.New(slog.NewTextHandler(&logs, nil))}
	api := strings.TrimPrefix(s.URL, "https://")
	b.SetBackends([]string{api})
	ctx := context.Background()
	b.CheckHealth(ctx)
	if !b.Backends()[api] {
		t.Fatalf("a ready API server is down:\n%s", logs.String())
	}
	s.StopEtcd()
	start := time.Now()
	for b.Backends()[api] {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the API server without etcd is still up after 30 s:\n%s", logs.String())
		}
		if tcpProbe(ctx, api) != nil {
			t.Fatal("the API server stopped accepting connections: this test proves nothing")
		}
		b.CheckHealth(ctx)
		time.Sleep(DefaultHealthEvery)
	}
	t.Logf("marked down %s after etcd stopped", time.Since(start).Round(100*time.Millisecond))
	if !strings.Contains(logs.String(), "etcd") {
		t.Errorf("the log does not say why:\n%s", logs.String())
	}
}
