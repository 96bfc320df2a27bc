package agent

import (
	"context"
	"fmt"
	"log/slog"
)

// redactingHandler masks secrets in every log record: the message and
// every attribute, groups and With attributes included. The agent learns
// secrets as it runs (the join token it generates, the one it reads from the
// master), so the redact function looks them up at each call rather than
// taking a fixed list. Redacting here, once, covers call sites that log a
// raw error (a retry, a best-effort report) without each having to remember.
type redactingHandler struct {
	next   slog.Handler
	redact func(string) string
}

var _ slog.Handler = redactingHandler{}

func newRedactingLogger(l *slog.Logger, redact func(string) string) *slog.Logger {
	return slog.New(redactingHandler{next: l.Handler(), redact: redact})
}

func (h redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h redactingHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h redactingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = h.attr(a)
	}
	return redactingHandler{next: h.next.WithAttrs(red), redact: h.redact}
}

func (h redactingHandler) WithGroup(name string) slog.Handler {
	return redactingHandler{next: h.next.WithGroup(name), redact: h.redact}
}

// attr redacts one attribute. Non-string values are rendered only to look
// for a secret; a value that holds none keeps its type, so JSON logs still
// carry numbers and durations as such.
func (h redactingHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, ga := range g {
			red[i] = h.attr(ga)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		var s string
		if err, ok := v.Any().(error); ok {
			s = err.Error()
		} else {
			s = fmt.Sprint(v.Any())
		}
		if r := h.redact(s); r != s {
			return slog.String(a.Key, r)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
