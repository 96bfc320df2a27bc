// Package logging builds the slog logger of onekube-agent and onekubed:
// text, JSON, or native journal entries whose attributes stay queryable
// fields.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/coreos/go-systemd/v22/journal"
)

// Log formats of --log-format.
const (
	LogAuto    = "auto"    // journal when stderr is the journal, else text
	LogText    = "text"    // slog text on stderr
	LogJSON    = "json"    // slog JSON on stderr
	LogJournal = "journal" // native journal entries with fields
)

// NewLogger builds the agent's logger. Under systemd, stderr is already the
// journal (JOURNAL_STREAM names it); writing native entries there keeps the
// fields (PHASE=, ERROR=) queryable with journalctl.
func NewLogger(format string, stderr io.Writer, level slog.Level) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: level}
	switch format {
	case LogAuto, "":
		if ok, _ := journal.StderrIsJournalStream(); ok && journal.Enabled() {
			return slog.New(newJournalHandler(level, journal.Send)), nil
		}
		return slog.New(slog.NewTextHandler(stderr, opts)), nil
	case LogText:
		return slog.New(slog.NewTextHandler(stderr, opts)), nil
	case LogJSON:
		return slog.New(slog.NewJSONHandler(stderr, opts)), nil
	case LogJournal:
		if !journal.Enabled() {
			return nil, fmt.Errorf("log format %q: the systemd journal is not available", format)
		}
		return slog.New(newJournalHandler(level, journal.Send)), nil
	}
	return nil, fmt.Errorf("unknown log format %q (want %s, %s, %s or %s)", format, LogAuto, LogText, LogJSON, LogJournal)
}

// sendFunc is journal.Send, a parameter so tests can capture entries.
type sendFunc func(msg string, p journal.Priority, vars map[string]string) error

// journalHandler turns slog records into journal entries: attributes become
// upper-case fields (phase -> PHASE, a group g.k -> G_K).
type journalHandler struct {
	level slog.Level
	send  sendFunc
	attrs []slog.Attr // pre-resolved With attributes, group-prefixed keys
	group string
}

func newJournalHandler(level slog.Level, send sendFunc) *journalHandler {
	return &journalHandler{level: level, send: send}
}

func (h *journalHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *journalHandler) Handle(_ context.Context, r slog.Record) error {
	vars := map[string]string{"SYSLOG_IDENTIFIER": "onekube-agent"}
	for _, a := range h.attrs {
		addField(vars, "", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		addField(vars, h.group, a)
		return true
	})
	return h.send(r.Message, priority(r.Level), vars)
}

func (h *journalHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append([]slog.Attr{}, h.attrs...)
	for _, a := range as {
		if h.group != "" {
			a.Key = h.group + "_" + a.Key
		}
		n.attrs = append(n.attrs, a)
	}
	return &n
}

func (h *journalHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	n := *h
	if n.group != "" {
		name = n.group + "_" + name
	}
	n.group = name
	return &n
}

// addField flattens a into vars with a journal-valid name.
func addField(vars map[string]string, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	key := a.Key
	if prefix != "" {
		key = prefix + "_" + key
	}
	if v.Kind() == slog.KindGroup {
		for _, g := range v.Group() {
			addField(vars, key, g)
		}
		return
	}
	if name := fieldName(key); name != "" {
		vars[name] = v.String()
	}
}

// fieldName maps a key to a journal field name: upper-case letters, digits
// and underscores, not starting with an underscore or digit (those are
// reserved or invalid).
func fieldName(key string) string {
	var b strings.Builder
	for _, c := range strings.ToUpper(key) {
		switch {
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9' && b.Len() > 0:
			b.WriteRune(c)
		case b.Len() > 0:
			b.WriteByte('_')
		}
	}
	return strings.TrimRight(b.String(), "_")
}

func priority(l slog.Level) journal.Priority {
	switch {
	case l >= slog.LevelError:
		return journal.PriErr
	case l >= slog.LevelWarn:
		return journal.PriWarning
	case l >= slog.LevelInfo:
		return journal.PriInfo
	}
	return journal.PriDebug
}
