package logging

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/journal"

	vmcontext "github.com/onekube/onekube/context"
)

func TestJournalHandlerFields(t *testing.T) {
	t.Parallel()
	type entry struct {
		msg  string
		pri  journal.Priority
		vars map[string]string
	}
	var got []entry
	h := newJournalHandler(slog.LevelInfo, func(m string, p journal.Priority, v map[string]string) error {
		got = append(got, entry{m, p, v})
		return nil
	})
	log := slog.New(h).With("phase", "kubeadm-init")
	log.Debug("hidden")
	log.Error("phase failed", "duration", "1.5s", "token", vmcontext.NewSecret("abcdef.0123456789abcdef"))
	log.WithGroup("sim").Warn("grouped", "vm-id", 7, slog.Group("g", "k", "v"))
	if len(got) != 2 {
		t.Fatalf("entries %d, want 2 (debug filtered)", len(got))
	}
	e := got[0]
	if e.msg != "phase failed" || e.pri != journal.PriErr {
		t.Errorf("entry %+v", e)
	}
	for k, v := range map[string]string{"PHASE": "kubeadm-init", "DURATION": "1.5s", "TOKEN": vmcontext.Mask, "SYSLOG_IDENTIFIER": "onekube-agent"} {
		if e.vars[k] != v {
			t.Errorf("%s = %q, want %q", k, e.vars[k], v)
		}
	}
	if got[1].vars["SIM_VM_ID"] != "7" || got[1].vars["SIM_G_K"] != "v" || got[1].pri != journal.PriWarning {
		t.Errorf("grouped entry %+v", got[1])
	}
}

func TestFieldName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"phase": "PHASE", "vm-id": "VM_ID", "_x": "X", "9lives": "LIVES", "a.b": "A_B", "---": ""} {
		if got := fieldName(in); got != want {
			t.Errorf("fieldName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewLogger(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	log, err := NewLogger(LogJSON, &b, slog.LevelInfo)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hello", "phase", "discover")
	if !strings.Contains(b.String(), `"phase":"discover"`) {
		t.Errorf("json log: %s", b.String())
	}
	b.Reset()
	log, _ = NewLogger(LogText, &b, slog.LevelInfo)
	log.Info("hello")
	if !strings.Contains(b.String(), "msg=hello") {
		t.Errorf("text log: %s", b.String())
	}
	if _, err := NewLogger("xml", &b, slog.LevelInfo); err == nil {
		t.Error("unknown format accepted")
	}
}
