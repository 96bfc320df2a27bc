//go:build realbed

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/leave"
	"github.com/onekube/onekube/agent/testbed"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
)

// TestBedServicePowerCycle: the whole service is powered off and on. Every
// VM leaves drain-only (cordon and drain, onekube-node.service's ExecStop
// under SHUTDOWN_POWEROFF), then loses power. The worker boots first: its
// uncordon at boot (onekube-uncordon.service) finds no API server, the
// master being off, and keeps trying; then the master boots. Every Node
// must be schedulable again, each uncordon having lifted its own cordon,
// within a bound.
func TestBedServicePowerCycle(t *testing.T) {
	b := newBed(t)
	s := startService(t, b, 1)
	runs := waitAgents(t, s, 2)
	for _, r := range runs {
		if r.Code != 0 || r.Err != nil {
			t.Fatalf("VM %d (%s): bootstrap exited %d (%v):\n%s", r.VM.ID, r.VM.Role, r.Code, r.Err, lastLines(r.Output(), 15))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	master := s.Sim.RoleVMs(s.ID, "master")[0]
	workers := s.Sim.RoleVMs(s.ID, "worker")
	all := append(append([]onegatesim.VMInfo{}, workers...), master)
	cfg, err := b.RESTConfig(s.VM(master.ID), "/etc/kubernetes/admin.conf")
	if err != nil {
		t.Fatal(err)
	}
	admin := kubernetes.NewForConfigOrDie(cfg)
	nodes := map[string]string{} // name: IP
	for _, vm := range all {
		nodes[s.Sim.UserTemplate(vm.ID)[vmcontext.KeyPubNodeName]] = vm.IP.String()
	}
	waitReady(t, admin, nodes)

	// Poweroff: each VM's leave, workers first, as OneFlow's shutdown
	// order would have it (masters last), with the master still up.
	for _, vm := range all {
		out, err := s.VM(vm.ID).Run(ctx, "onekubed", "leave", "--mode", "drain", "--budget", "60s", "--log-format", "text")
		if err != nil || !strings.Contains(out, "cordoned true") {
			t.Fatalf("VM %d: leave: %v\n%s", vm.ID, err, out)
		}
	}
	for name := range nodes {
		n, err := admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil || !n.Spec.Unschedulable || n.Annotations[leave.AnnotationCordoned] == "" {
			t.Fatalf("after leave, Node %s: %v (unschedulable, annotated: want both)", name, err)
		}
	}
	for _, vm := range all {
		if err := s.VM(vm.ID).PowerOff(); err != nil {
			t.Fatal(err)
		}
	}

	// Power on, workers first; each boot starts the VM's units (lb, and
	// serve on the master) and then its uncordon, as systemd would.
	var wg sync.WaitGroup
	results := map[int]*uncordonRun{}
	start := func(vm onegatesim.VMInfo) {
		if err := s.VM(vm.ID).PowerOn(); err != nil {
			t.Fatal(err)
		}
		r := &uncordonRun{}
		results[vm.ID] = r
		wg.Go(func() { r.run(ctx, s.VM(vm.ID)) })
	}
	for _, w := range workers {
		start(w)
	}
	for _, w := range workers {
		waitUntil(t, time.Minute, fmt.Sprintf("VM %d's uncordon to find no API server", w.ID), func() bool {
			return strings.Contains(results[w.ID].output(), "retrying") || results[w.ID].finished()
		})
	}
	masterOn := time.Now()
	start(master)
	deadline := masterOn.Add(3 * time.Minute)
	for {
		var left []string
		for name := range nodes {
			n, err := admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil || n.Spec.Unschedulable || n.Annotations[leave.AnnotationCordoned] != "" {
				left = append(left, name)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for id, r := range results {
				t.Logf("VM %d: leave --uncordon:\n%s", id, r.output())
			}
			t.Fatalf("still cordoned %s after the master was powered on: %v", time.Since(masterOn).Round(time.Second), left)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("figure: every Node schedulable %s after the master was powered on", time.Since(masterOn).Round(100*time.Millisecond))
	wg.Wait()
	for id, r := range results {
		if r.err != nil || !strings.Contains(r.output(), "uncordoned") {
			t.Errorf("VM %d: leave --uncordon: %v\n%s", id, r.err, r.output())
		}
	}
	for _, w := range workers {
		if out := results[w.ID].output(); !strings.Contains(out, "the API server answers") {
			t.Errorf("VM %d: the worker's uncordon did not wait for the master:\n%s", w.ID, out)
		}
	}
	waitReady(t, admin, nodes)
}

// uncordonRun is one run of onekube-uncordon.service's command in a VM.
type uncordonRun struct {
	mu   sync.Mutex
	out  bytes.Buffer
	err  error
	done bool
}

func (r *uncordonRun) run(ctx context.Context, vm *testbed.VM) {
	cmd, err := vm.Command(ctx, nil, "onekubed", "leave", "--uncordon", "--log-format", "text")
	if err == nil {
		cmd.Stdout, cmd.Stderr = r, r
		err = cmd.Run()
	}
	r.mu.Lock()
	r.err, r.done = err, true
	r.mu.Unlock()
}

func (r *uncordonRun) finished() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

func (r *uncordonRun) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.Write(p)
}

func (r *uncordonRun) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}
