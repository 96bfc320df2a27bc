package leave

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// fakeClock is Retry's clock: Sleep advances it and records the waits.
type fakeClock struct {
	now   time.Time
	waits []time.Duration
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	return nil
}

// downFor is a cluster whose API server refuses the first n calls, each
// costing spend of the clock (a connect timing out), then answers.
func downFor(c *fakeClock, n int, spend time.Duration, node *corev1.Node) (*fake.Clientset, *int) {
	cs := fake.NewClientset(node)
	calls := 0
	cs.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		if calls <= n {
			c.now = c.now.Add(spend)
			return true, nil, refused
		}
		return false, nil, nil
	})
	return cs, &calls
}

// refused is what client-go returns while nothing listens.
var refused = &url.Error{Op: "Get", URL: "https://127.0.0.1:6444/api/v1/nodes/worker-1",
	Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}

func cordoned(name string, ours bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Unschedulable: true}}
	if ours {
		n.Annotations = map[string]string{AnnotationCordoned: "true"}
	}
	return n
}

func TestUncordonAtBootPacing(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		down      int
		node      *corev1.Node
		wantLift  bool
		wantWaits string
	}{
		"answers at once":         {0, cordoned("worker-1", true), true, ""},
		"down for 7 tries":        {7, cordoned("worker-1", true), true, "1s 2s 4s 8s 16s 30s 30s"},
		"an operator's cordon":    {2, cordoned("worker-1", false), false, "1s 2s"},
		"no Node of this name":    {1, cordoned("worker-2", true), false, "1s"},
		"first outage, then once": {1, cordoned("worker-1", true), true, "1s"},
	} {
		clock := &fakeClock{now: time.Unix(1e9, 0)}
		cs, _ := downFor(clock, c.down, 0, c.node)
		lifted, err := UncordonAtBoot(context.Background(), cs, "worker-1", Retry{Now: clock.Now, Sleep: clock.Sleep})
		if err != nil || lifted != c.wantLift {
			t.Errorf("%s: lifted=%v err=%v, want %v", name, lifted, err, c.wantLift)
		}
		var waits []string
		for _, w := range clock.waits {
			waits = append(waits, w.String())
		}
		if got := strings.Join(waits, " "); got != c.wantWaits {
			t.Errorf("%s: waits %q, want %q", name, got, c.wantWaits)
		}
		if !c.wantLift {
			continue
		}
		n, _ := cs.CoreV1().Nodes().Get(context.Background(), "worker-1", metav1.GetOptions{})
		if n.Spec.Unschedulable || n.Annotations[AnnotationCordoned] != "" {
			t.Errorf("%s: still cordoned: %+v", name, n)
		}
	}
}

// TestUncordonGivesUp: an API server that never answers is tried for
// the budget and no longer, each try bounded, the failures logged at
// most once a minute, and the error names the last failure.
func TestUncordonGivesUp(t *testing.T) {
	t.Parallel()
	for name, spend := range map[string]time.Duration{
		"refused at once":               0,
		"each try times out after 15 s": DefaultUncordonAttempt,
	} {
		clock := &fakeClock{now: time.Unix(1e9, 0)}
		start := clock.now
		cs, calls := downFor(clock, 1<<30, spend, cordoned("worker-1", true))
		var logs strings.Builder
		log := slog.New(slog.NewTextHandler(&logs, nil))
		_, err := UncordonAtBoot(context.Background(), cs, "worker-1", Retry{Now: clock.Now, Sleep: clock.Sleep, Log: log})
		if err == nil || !strings.Contains(err.Error(), "gave up after") || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("%s: %v", name, err)
		}
		took := clock.now.Sub(start)
		if took > DefaultUncordonFor || took < DefaultUncordonFor-DefaultUncordonMax-spend {
			t.Errorf("%s: gave up after %s, want within %s of %s", name, took, DefaultUncordonMax+spend, DefaultUncordonFor)
		}
		for _, w := range clock.waits {
			if w > DefaultUncordonMax {
				t.Errorf("%s: waited %s between tries, more than %s", name, w, DefaultUncordonMax)
			}
		}
		lines := strings.Count(logs.String(), "retrying")
		if maxLines := int(DefaultUncordonFor/DefaultUncordonLogEvery) + 1; lines < 10 || lines > maxLines {
			t.Errorf("%s: %d failures logged in %d tries, want between 10 and %d", name, lines, *calls, maxLines)
		}
	}
}

// A stop (the VM shutting down again) ends the wait at once.
func TestUncordonStops(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cs := fake.NewClientset()
	cs.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		cancel()
		return true, nil, errors.New("connect: connection refused")
	})
	done := make(chan error, 1)
	go func() {
		_, err := UncordonAtBoot(ctx, cs, "worker-1", Retry{})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "stopped after 1 attempts") {
			t.Errorf("%v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("UncordonAtBoot did not stop with its context")
	}
}
