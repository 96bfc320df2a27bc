package agent

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/state"
	"github.com/onekube/onekube/agent/system/systemtest"
)

type recordingReporter struct{ phases, failures []string }

func (r *recordingReporter) Phase(_ context.Context, n string, _ time.Time) {
	r.phases = append(r.phases, n)
}
func (r *recordingReporter) Failure(_ context.Context, m string) { r.failures = append(r.failures, m) }
func (r *recordingReporter) Status(s string)                     { r.phases = append(r.phases, "notify:"+s) }

func TestRunnerOrderSkipsAndErrors(t *testing.T) {
	t.Parallel()
	var ran []string
	step := func(name string, err error) func(context.Context, Data) error {
		return func(context.Context, Data) error { ran = append(ran, name); return err }
	}
	boom := errors.New("boom")
	cases := map[string]struct {
		phases    []Phase
		completed []string
		wantRan   string
		wantErr   string
		wantDone  string
	}{
		"in order": {
			phases:   []Phase{{Name: "a", Run: step("a", nil)}, {Name: "b", Run: step("b", nil), Once: true}},
			wantRan:  "a,b",
			wantDone: "b",
		},
		"RunIf false skips": {
			phases: []Phase{
				{Name: "a", Run: step("a", nil), RunIf: func(Data) (bool, error) { return false, nil }},
				{Name: "b", Run: step("b", nil)},
			},
			wantRan: "b",
		},
		"completed Once phase skipped": {
			phases:    []Phase{{Name: "a", Run: step("a", nil), Once: true}, {Name: "b", Run: step("b", nil)}},
			completed: []string{"a"},
			wantRan:   "b",
			wantDone:  "a",
		},
		"failure stops and names the phase": {
			phases:  []Phase{{Name: "a", Run: step("a", boom), Once: true}, {Name: "b", Run: step("b", nil)}},
			wantRan: "a",
			wantErr: "phase a: boom",
		},
		"RunIf error": {
			phases:  []Phase{{Name: "a", Run: step("a", nil), RunIf: func(Data) (bool, error) { return false, boom }}},
			wantErr: "phase a: boom",
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			ran = nil
			st := &state.State{Completed: c.completed}
			rep := &recordingReporter{}
			saves := 0
			r := &Runner{Report: rep, Notify: rep, Log: slog.New(slog.DiscardHandler), Clock: systemtest.NewClock(testEpoch),
				Save: func() error { saves++; return nil }, Redact: func(s string) string { return s }}
			err := r.Run(context.Background(), c.phases, &bootData{st: st})
			if got := strings.Join(ran, ","); got != c.wantRan {
				t.Errorf("ran %q, want %q", got, c.wantRan)
			}
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || err.Error() != c.wantErr) {
				t.Errorf("err = %v, want %q", err, c.wantErr)
			}
			if c.wantErr != "" && !errors.Is(err, boom) {
				t.Errorf("error does not wrap the cause")
			}
			if got := strings.Join(st.Completed, ","); got != c.wantDone {
				t.Errorf("completed %q, want %q", got, c.wantDone)
			}
			// Every phase that ran was reported to OneGate and systemd first.
			for _, p := range ran {
				if !strings.Contains(strings.Join(rep.phases, ","), p+",notify:"+p) {
					t.Errorf("phase %s not reported before running: %v", p, rep.phases)
				}
			}
			if len(ran) > 0 && saves == 0 {
				t.Error("state never saved")
			}
		})
	}
}

func TestPhaseListsAreComplete(t *testing.T) {
	t.Parallel()
	for _, k := range []Kind{KindInit, KindWorker, KindControlPlane} {
		ps := phasesFor(k)
		if len(ps) == 0 {
			t.Errorf("%s: no phases", k)
		}
		seen := map[string]bool{}
		for _, p := range ps {
			if p.Name == "" || p.Run == nil || seen[p.Name] {
				t.Errorf("%s: bad phase %+v", k, p.Name)
			}
			seen[p.Name] = true
		}
		if k != KindControlPlane && ps[len(ps)-1].Name != PhasePublish {
			t.Errorf("%s: publish is not last", k)
		}
	}
	if phasesFor(Kind("bogus")) != nil {
		t.Error("unknown kind has phases")
	}
}
