package agent

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

func TestRedactingLoggerMasksEverywhere(t *testing.T) {
	t.Parallel()
	tok := vmcontext.NewSecret("abcdef.0123456789abcdef")
	var learned vmcontext.Secret // a secret the agent learns after the logger exists
	redact := func(s string) string { return vmcontext.Redact(s, tok, learned) }

	var buf bytes.Buffer
	base := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	log := newRedactingLogger(base, redact).With("with", "token "+tok.Reveal())
	learned = vmcontext.NewSecret("zyxwvu.9876543210zyxwvu")

	log.Debug("retrying with "+tok.Reveal(),
		"error", errors.New("500: echo "+learned.Reveal()),
		"plain", tok.Reveal(),
		slog.Group("g", "inner", learned.Reveal(), "n", 3),
		"stringer", stringer("has "+tok.Reveal()),
		"duration", 1500*time.Millisecond,
		"count", 7,
	)
	out := buf.String()
	for _, s := range []string{tok.Reveal(), learned.Reveal()} {
		if strings.Contains(out, s) {
			t.Errorf("log line leaks %q:\n%s", s, out)
		}
	}
	for _, want := range []string{
		`"msg":"retrying with <redacted>"`, `"with":"token <redacted>"`, `"error":"500: echo <redacted>"`,
		`"plain":"<redacted>"`, `"inner":"<redacted>"`, `"stringer":"has <redacted>"`,
		`"n":3`, `"count":7`, `"duration":1500000000`, // untouched values keep their types
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log line lacks %s:\n%s", want, out)
		}
	}
}

type stringer string

func (s stringer) String() string { return string(s) }
