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
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
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

// A rerun after a failure announces its quiet phase: serve's tokens loop
// and CSR approver take PHASE=failed for an agent that waits for nothing,
// and a worker's retry stayed unapproved (TestAgentJoinRetry on the bed).
// Once one phase is out, the quiet ones are quiet again.
func TestRunnerAnnouncesOverAStaleFailure(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		published string
		want      string
	}{
		"after a failure":   {published: PhaseFailed, want: "join,notify:join,notify:more"},
		"first attempt":     {published: "wait-master", want: "notify:join,notify:more"},
		"nothing published": {want: "notify:join,notify:more"},
	} {
		t.Run(name, func(t *testing.T) {
			rep := &recordingReporter{}
			r := &Runner{Report: rep, Notify: rep, Log: slog.New(slog.DiscardHandler), Clock: systemtest.NewClock(testEpoch),
				Save: func() error { return nil }, Redact: func(s string) string { return s }}
			d := &bootData{st: &state.State{}}
			ut := map[string]string{}
			if c.published != "" {
				ut[vmcontext.KeyPubPhase] = c.published
			}
			d.node.Self = &onegate.VM{UserTemplate: ut}
			noop := func(context.Context, Data) error { return nil }
			if err := r.Run(context.Background(), []Phase{{Name: "join", Quiet: true, Run: noop}, {Name: "more", Quiet: true, Run: noop}}, d); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(rep.phases, ","); got != c.want {
				t.Errorf("reported %q, want %q", got, c.want)
			}
		})
	}
}
