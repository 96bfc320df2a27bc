package leave

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Pacing of the uncordon at boot. It starts before any API server may
// answer: on a master its own comes up minutes later, and after a whole
// service was powered off no master answers any node until one is back.
const (
	DefaultUncordonFirst = time.Second
	DefaultUncordonMax   = 30 * time.Second
	// DefaultUncordonFor bounds the whole wait (onekube-uncordon.service's
	// TimeoutStartSec is above it).
	DefaultUncordonFor = 30 * time.Minute
	// DefaultUncordonAttempt bounds one try: a backend that accepts and
	// then hangs must not eat the budget.
	DefaultUncordonAttempt = 15 * time.Second
	// DefaultUncordonLogEvery is the most often a failure is logged.
	DefaultUncordonLogEvery = time.Minute
)

// Retry paces UncordonAtBoot. Zero fields take the defaults above.
type Retry struct {
	First, Max, For, Attempt, LogEvery time.Duration
	Log                                *slog.Logger
	// Now and Sleep are the clock (tests); Sleep returns early with the
	// context's error.
	Now   func() time.Time
	Sleep func(context.Context, time.Duration) error
}

func (r *Retry) defaults() {
	or := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	or(&r.First, DefaultUncordonFirst)
	or(&r.Max, DefaultUncordonMax)
	or(&r.For, DefaultUncordonFor)
	or(&r.Attempt, DefaultUncordonAttempt)
	or(&r.LogEvery, DefaultUncordonLogEvery)
	if r.Log == nil {
		r.Log = slog.New(slog.DiscardHandler)
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Sleep == nil {
		r.Sleep = sleep
	}
}

// UncordonAtBoot is Uncordon retried until the API server answers: every
// failure is retried (refused, timed out, 5xx, and 401/403 too, which a
// clock not yet synced at boot can cause), after First, doubling up to
// Max, for at most For; the first failure is logged, then at most one a
// LogEvery.
func UncordonAtBoot(ctx context.Context, cs kubernetes.Interface, name string, r Retry) (bool, error) {
	r.defaults()
	start := r.Now()
	delay := r.First
	var logged time.Time
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, r.Attempt)
		lifted, err := Uncordon(actx, cs, name)
		cancel()
		if err == nil {
			if attempt > 1 {
				r.Log.Info("the API server answers", "attempts", attempt, "after", r.Now().Sub(start).Round(time.Second))
			}
			return lifted, nil
		}
		if ctx.Err() != nil {
			return false, fmt.Errorf("stopped after %d attempts: %w", attempt, err)
		}
		waited := r.Now().Sub(start)
		if waited+delay > r.For {
			return false, fmt.Errorf("gave up after %d attempts over %s: %w", attempt, waited.Round(time.Second), err)
		}
		if now := r.Now(); logged.IsZero() || now.Sub(logged) >= r.LogEvery {
			r.Log.Warn("the API server does not answer yet; retrying", "attempts", attempt, "next", delay, "error", err)
			logged = now
		}
		if err := r.Sleep(ctx, delay); err != nil {
			return false, fmt.Errorf("stopped after %d attempts: %w", attempt, err)
		}
		delay = min(2*delay, r.Max)
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Uncordon undoes a drain-only leave once the VM is back: only a cordon
// leave made (its annotation) is lifted, never an operator's.
func Uncordon(ctx context.Context, cs kubernetes.Interface, name string) (bool, error) {
	node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading node %s: %w", name, err)
	}
	if _, ours := node.Annotations[AnnotationCordoned]; !ours {
		return false, nil
	}
	patch, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{AnnotationCordoned: nil}},
		"spec":     map[string]any{"unschedulable": false},
	})
	if _, err := cs.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return false, fmt.Errorf("uncordoning node %s: %w", name, err)
	}
	return true, nil
}
