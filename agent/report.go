package agent

import (
	"context"
	"log/slog"
	"strings"
	"time"
	"unicode"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// Phase names that are not phases but outcomes, published as
// ONEGATE_K8S_PHASE.
const (
	PhaseFailed = "failed"
	PhaseDone   = "done"
)

// Reporter tells the outside world how the boot is going. Reports are best
// effort: a OneGate hiccup must not fail a boot that is otherwise fine.
type Reporter interface {
	// Phase announces that a phase starts.
	Phase(ctx context.Context, name string)
	// Failure publishes a short, already redacted error.
	Failure(ctx context.Context, msg string)
}

// oneGateReporter publishes to this VM's USER_TEMPLATE.
type oneGateReporter struct {
	og      OneGate
	log     *slog.Logger
	timeout time.Duration // per request
}

func (r oneGateReporter) Phase(ctx context.Context, name string) {
	r.put(ctx, onegate.KV{Key: vmcontext.KeyPubPhase, Value: name})
}

// Failure sends the phase and the error in one update, so a reader never
// sees "failed" without its reason.
func (r oneGateReporter) Failure(ctx context.Context, msg string) {
	r.put(ctx,
		onegate.KV{Key: vmcontext.KeyPubPhase, Value: PhaseFailed},
		onegate.KV{Key: vmcontext.KeyPubError, Value: SanitizeValue(msg)})
}

func (r oneGateReporter) put(ctx context.Context, kvs ...onegate.KV) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if err := r.og.UpdateVM(ctx, kvs...); err != nil {
		r.log.Warn("reporting to OneGate failed", "key", kvs[0].Key, "error", err)
	}
}

// maxErrorValue keeps ONEGATE_K8S_ERROR short: it is a pointer to the
// journal, not a copy of it.
const maxErrorValue = 240

// SanitizeValue makes s safe as a OneGate USER_TEMPLATE value. The server
// re-quotes values and breaks on '"', ',', '[', ']', '\' and newlines, so
// those become spaces; runs of blanks collapse, and the result is cut to a
// short length on a rune boundary. An empty result becomes "-" because
// OneGate rejects an empty value.
func SanitizeValue(s string) string {
	var b strings.Builder
	space := false
	for _, c := range s {
		if strings.ContainsRune("\",[]\\", c) || unicode.IsSpace(c) || !unicode.IsPrint(c) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(c)
	}
	out := b.String()
	if len(out) > maxErrorValue {
		cut := maxErrorValue
		for cut > 0 && !utf8Start(out[cut]) {
			cut--
		}
		out = out[:cut] + "…"
	}
	if out == "" {
		return "-"
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
