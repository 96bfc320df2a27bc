package serve

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/drain"
)

// KubectlDrainer drains with kubectl's own library, as `kubectl drain
// --ignore-daemonsets --delete-emptydir-data` does: evictions, so every
// PodDisruptionBudget is honoured, retried until Timeout. Unmanaged pods
// are not forced: a pod nothing recreates stops the drain and the rollout,
// with its name in the reason.
type KubectlDrainer struct {
	Client  kubernetes.Interface
	Timeout time.Duration
	// RetryDelay is the wait after an eviction a PodDisruptionBudget
	// refused (0: DefaultEvictRetryDelay).
	RetryDelay time.Duration
	Log        *slog.Logger
}

// DefaultEvictRetryDelay is kubectl drain's wait between evictions a PDB
// refuses (k8s.io/kubectl pkg/cmd/drain/drain.go sets 5 s; the library's
// zero value retries at once, a request and a log line per API round
// trip for the whole drain timeout).
const DefaultEvictRetryDelay = 5 * time.Second

// DefaultDrainTimeout is how long a PodDisruptionBudget may hold a drain
// before the rollout stops. It stays well inside DefaultMaxTick, past which
// the runner calls serve stuck and systemd restarts it.
const DefaultDrainTimeout = 5 * time.Minute

var _ UpgradeDrainer = KubectlDrainer{}

func (d KubectlDrainer) helper(ctx context.Context) *drain.Helper {
	log := d.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultDrainTimeout
	}
	delay := d.RetryDelay
	if delay <= 0 {
		delay = DefaultEvictRetryDelay
	}
	return &drain.Helper{
		Ctx: ctx, Client: d.Client,
		EvictErrorRetryDelay: delay,
		GracePeriodSeconds:   -1,
		IgnoreAllDaemonSets:  true,
		DeleteEmptyDirData:   true,
		Timeout:              timeout,
		Out:                  slogWriter{log, slog.LevelInfo},
		ErrOut:               slogWriter{log, slog.LevelWarn},
	}
}

// Drain implements UpgradeDrainer.
func (d KubectlDrainer) Drain(ctx context.Context, node string) error {
	n, err := d.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return err
	}
	h := d.helper(ctx)
	if err := drain.RunCordonOrUncordon(h, n, true); err != nil {
		return fmt.Errorf("cordoning: %w", err)
	}
	if err := drain.RunNodeDrain(h, node); err != nil {
		return fmt.Errorf("not drained within %s (a PodDisruptionBudget or an unmanaged pod holds it): %w", h.Timeout, err)
	}
	return nil
}

// Uncordon implements UpgradeDrainer.
func (d KubectlDrainer) Uncordon(ctx context.Context, node string) error {
	n, err := d.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return err
	}
	return drain.RunCordonOrUncordon(d.helper(ctx), n, false)
}

// slogWriter turns drain's progress lines into log records.
type slogWriter struct {
	log   *slog.Logger
	level slog.Level
}

func (w slogWriter) Write(p []byte) (int, error) {
	w.log.Log(context.Background(), w.level, string(p))
	return len(p), nil
}
