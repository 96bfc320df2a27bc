package agent

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"
	"unicode"

	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
	"github.com/onekube/onekube/context/protocol"
)

// Phase names that are not phases but outcomes, published as
// ONEGATE_K8S_PHASE.
const (
	PhaseFailed = protocol.PhaseFailed
	PhaseDone   = protocol.PhaseDone
)

// Reporter tells the outside world how the boot is going. Reports are best
// effort: a OneGate hiccup must not fail a boot that is otherwise fine.
type Reporter interface {
	// Phase announces that a phase starts, with the time this VM expects
	// to publish its join data (zero: no estimate).
	Phase(ctx context.Context, name string, eta time.Time)
	// Failure publishes a short, already redacted error.
	Failure(ctx context.Context, msg string)
}

// oneGateReporter publishes to this VM's USER_TEMPLATE.
type oneGateReporter struct {
	og      OneGate
	log     *slog.Logger
	timeout time.Duration // per request
}

func (r oneGateReporter) Phase(ctx context.Context, name string, eta time.Time) {
	kvs := []onegate.KV{{Key: vmcontext.KeyPubPhase, Value: name}}
	if !eta.IsZero() {
		// One update: a reader never sees the phase without its estimate.
		kvs = append([]onegate.KV{{Key: vmcontext.KeyPubETA, Value: eta.UTC().Format(time.RFC3339)}}, kvs...)
	}
	_ = r.put(ctx, kvs...)
}

// Failure sends the phase and the error in one update, so a reader never
// sees "failed" without its reason, then reads the error back. On 6.0+ an
// '=' travels as is (kubeadm's reasons are full of them: level=fatal,
// msg=...); 5.12 and older cut such a value or refuse the update (see
// onegate.EncodeUpdate), so when the read-back differs the report is sent
// again with every '=' spelt ':'.
func (r oneGateReporter) Failure(ctx context.Context, msg string) {
	val := SanitizeValue(msg)
	err := r.put(ctx,
		onegate.KV{Key: vmcontext.KeyPubPhase, Value: PhaseFailed},
		onegate.KV{Key: vmcontext.KeyPubError, Value: val})
	if !strings.Contains(val, "=") {
		return
	}
	if err == nil {
		gctx, cancel := context.WithTimeout(ctx, r.timeout)
		vm, gerr := r.og.GetVM(gctx)
		cancel()
		if gerr != nil || vm.UserTemplate[vmcontext.KeyPubError] == val {
			return
		}
	}
	r.log.Warn("OneGate did not store the error as sent (OpenNebula before 6.0?); sending it without '='")
	_ = r.put(ctx,
		onegate.KV{Key: vmcontext.KeyPubPhase, Value: PhaseFailed},
		onegate.KV{Key: vmcontext.KeyPubError, Value: strings.ReplaceAll(val, "=", ":")})
}

func (r oneGateReporter) put(ctx context.Context, kvs ...onegate.KV) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	err := r.og.UpdateVM(ctx, kvs...)
	if err != nil {
		r.log.Warn("reporting to OneGate failed", "key", kvs[len(kvs)-1].Key, "error", err)
	}
	return err
}

// briefError is err for a 240-character report: where a command failed,
// its command line and output tail give way to the command's name and the
// tool's own reason (system.ExitError.Brief), so the report carries
// kubeadm's "[ERROR CRI]: ..." rather than "kubeadm init --config ...".
func briefError(err error) string {
	full := err.Error()
	var ee *system.ExitError
	if errors.As(err, &ee) {
		if long := ee.Error(); strings.Contains(full, long) {
			return strings.Replace(full, long, ee.Brief(), 1)
		}
	}
	return full
}

// maxErrorValue keeps ONEGATE_K8S_ERROR short: it is a pointer to the
// journal, not a copy of it.
const maxErrorValue = 240

// sanitized maps the characters no OneGate value can carry (see
// onegate.CheckValue) to the nearest ones that can, so a message stays
// readable: quotes become apostrophes, brackets parentheses.
var sanitized = strings.NewReplacer(`"`, "'", "[", "(", "]", ")", ",", ";", `\`, "/")

// SanitizeValue makes s a value OneGate stores as sent (onegate.CheckValue):
// quotes, brackets, commas and backslashes are replaced (see sanitized),
// line breaks and other control or blank runs become one space, and the
// result is cut to maxErrorValue bytes on a rune boundary. '=' is kept (it
// needs OpenNebula 6.0+, see oneGateReporter.Failure). An empty result
// becomes "-" because an empty value cannot be stored.
func SanitizeValue(s string) string {
	s = sanitized.Replace(s)
	var b strings.Builder
	space := false
	for _, c := range s {
		if unicode.IsSpace(c) || !unicode.IsPrint(c) {
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
