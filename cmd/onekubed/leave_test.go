package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/onekube/onekube/agent/leave"
	"github.com/onekube/onekube/agent/state"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/agent/testbed/loopback"
	"github.com/onekube/onekube/cmd/internal/agentcli"
	vmcontext "github.com/onekube/onekube/context"
)

// TestUncordonAtBoot: `leave --uncordon` runs at boot, before any API
// server answers (the local balancer refuses: every master is still
// booting). It keeps trying and lifts the cordon a drain-only leave made
// once the API server answers, on the real API server with the node's
// own credential.
func TestUncordonAtBoot(t *testing.T) {
	s := loopback.Start(t, loopback.Options{})
	admin := s.Client(t)
	ctx := context.Background()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1",
		Annotations: map[string]string{leave.AnnotationCordoned: "true"}}, Spec: corev1.NodeSpec{Unschedulable: true}}
	if _, err := admin.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	node, err := s.SignClient("system:node:worker-1", "system:nodes")
	if err != nil {
		t.Fatal(err)
	}
	// The balancer's address: nothing listens there until the "master"
	// is up, 2.5 s after the unit started.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	balancer := l.Addr().String()
	_ = l.Close()

	root := t.TempDir()
	st := state.Store{Root: system.Root(root)}
	if err := st.Save(&state.State{Published: map[string]string{vmcontext.KeyPubNodeName: "worker-1"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Finish(time.Now()); err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://" + balancer, CertificateAuthorityData: s.CAPEM}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{ClientCertificateData: node.CertData, ClientKeyData: node.KeyData}
	cfg.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "x"
	if err := clientcmd.WriteToFile(*cfg, filepath.Join(root, leave.KubeletConfig)); err != nil {
		t.Fatal(err)
	}

	forwardLater(t, 2500*time.Millisecond, balancer, strings.TrimPrefix(s.URL, "https://"))
	var out, errb bytes.Buffer
	start := time.Now()
	code := run([]string{"leave", "--uncordon", "--root", root, "--log-format", "text"}, &out, &errb)
	if code != agentcli.ExitOK {
		t.Fatalf("exit %d after %s\n%s%s", code, time.Since(start).Round(time.Millisecond), out.String(), errb.String())
	}
	got, err := admin.CoreV1().Nodes().Get(ctx, "worker-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Unschedulable || got.Annotations[leave.AnnotationCordoned] != "" {
		t.Errorf("after --uncordon: unschedulable=%v annotations=%v", got.Spec.Unschedulable, got.Annotations)
	}
	logs := errb.String()
	if !strings.Contains(logs, "retrying") || !strings.Contains(logs, "uncordoned") {
		t.Errorf("the retry and the uncordon are not logged:\n%s", logs)
	}
	// An operator's cordon stays: a later boot lifts nothing.
	if _, err := admin.CoreV1().Nodes().Patch(ctx, "worker-1", types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"leave", "--uncordon", "--root", root, "--log-format", "text"}, io.Discard, io.Discard); code != agentcli.ExitOK {
		t.Fatalf("second boot: exit %d", code)
	}
	if got, _ := admin.CoreV1().Nodes().Get(ctx, "worker-1", metav1.GetOptions{}); !got.Spec.Unschedulable {
		t.Error("--uncordon lifted an operator's cordon")
	}
}

// forwardLater listens on addr after a while and pipes every connection
// to to, until t ends: the local balancer once a master answers.
func forwardLater(t *testing.T, after time.Duration, addr, to string) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Go(func() {
		select {
		case <-time.After(after):
		case <-ctx.Done():
			return
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return // the test then fails on the API server never answering
		}
		go func() { <-ctx.Done(); _ = l.Close() }()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				up, err := net.Dial("tcp", to)
				if err != nil {
					return
				}
				defer up.Close()
				go func() { <-ctx.Done(); _ = c.Close() }()
				go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
				_, _ = io.Copy(c, up)
			})
		}
	})
}
