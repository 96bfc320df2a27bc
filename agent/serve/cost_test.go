package serve

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/system/systemtest"
	"github.com/onekube/onekube/agent/testbed/loopback"
	"github.com/onekube/onekube/context/onegate"
)

// The OneGate cost of serve on an idle cluster (every VM has its Node,
// nobody waits), with the production loops and their default ticks, over
// one hour of fake time against a real API server. Each loop ticks when
// it said it would, in time order, as the runner does on the acting
// master; OneGate has no watch, so this is what serve costs it for ever.
func TestIdleOneGateCostPerHour(t *testing.T) {
	s := loopback.Start(t, loopback.Options{})
	cs := s.Client(t)
	clock := systemtest.NewClock(time.Now())
	og := newFakeService(10)
	og.add("master", 10, nil)
	addNode(t, cs, "master-10", 10)
	setReady(t, cs, "master-10", true)
	for id := 11; id <= 13; id++ {
		og.add("worker", id, nil)
		name := fmt.Sprintf("worker-%d", id)
		addNode(t, cs, name, id)
		setReady(t, cs, name, true)
	}
	board := NewStatusBoard("")
	board.setActing(true, "master-10")
	shared := &SharedService{OneGate: og, Clock: clock}
	loops := []Loop{
		&Presence{OneGate: og, Board: board},
		&Publish{OneGate: og, Client: cs, Clock: clock, Facts: func() ([]onegate.KV, error) { return nil, nil }},
		&Tokens{OneGate: og, Client: cs, Clock: clock, Service: shared},
		&Cleanup{OneGate: og, Client: cs, Clock: clock, Service: shared},
	}
	sc := newScheduler(clock, loops...)
	sc.run(t, time.Hour, nil)
	ticks := sc.ticks
	total := 0
	for _, n := range og.calls {
		total += n
	}
	t.Logf("one idle hour: %d OneGate requests %v; ticks %v", total, og.calls, ticks)
	// 120 tokens ticks of one GET /service each (cleanup rides on them),
	// plus the reads of what this VM shows once per start (presence,
	// publish, the four mirrors), publish's check of its join facts every
	// 30 minutes (DefaultFactsIdle) and presence's one PUT.
	if og.count("GetService") != 120 || og.count("GetVMByID") != 0 || total > 130 {
		t.Errorf("idle cost %d requests/h (%v), want 120 GET /service and a few start-up reads", total, og.calls)
	}
}

// scheduler ticks each loop when it asked to be ticked, in time order, on
// the fake clock, as the runner does.
type scheduler struct {
	clock *systemtest.Clock
	loops []Loop
	due   []time.Time
	ticks map[string]int
}

func newScheduler(clock *systemtest.Clock, loops ...Loop) *scheduler {
	s := &scheduler{clock: clock, loops: loops, due: make([]time.Time, len(loops)), ticks: map[string]int{}}
	for i := range s.due {
		s.due[i] = clock.Now()
	}
	return s
}

// run ticks for span of fake time, or until stop holds.
func (s *scheduler) run(t *testing.T, span time.Duration, stop func() bool) {
	t.Helper()
	end := s.clock.Now().Add(span)
	for stop == nil || !stop() {
		i := 0
		for j := range s.due {
			if s.due[j].Before(s.due[i]) {
				i = j
			}
		}
		if !s.due[i].Before(end) {
			s.clock.Advance(end.Sub(s.clock.Now()))
			return
		}
		s.clock.Advance(s.due[i].Sub(s.clock.Now()))
		next, err := s.loops[i].Tick(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", s.loops[i].Name(), err)
		}
		s.ticks[s.loops[i].Name()]++
		s.due[i] = s.due[i].Add(next)
	}
}

// How long a VM that starts waiting on an idle cluster waits for a token
// in OneGate, with the default ticks: it appears at several points of the
// tokens loop's 30 s idle tick; the token is minted at that loop's next
// tick and mirrored at publish's next (3 s).
func TestTokenLatencyWithDefaultTicks(t *testing.T) {
	s := loopback.Start(t, loopback.Options{})
	cs := s.Client(t)
	var worst time.Duration
	for i, offset := range []time.Duration{time.Second, 15 * time.Second, 29 * time.Second} {
		clock := systemtest.NewClock(time.Now())
		og := newFakeService(10)
		og.add("master", 10, nil)
		if i == 0 {
			addNode(t, cs, "master-10", 10)
		}
		shared := &SharedService{OneGate: og, Clock: clock}
		tk := &Tokens{OneGate: og, Client: cs, Clock: clock, Service: shared}
		sc := newScheduler(clock, &Publish{OneGate: og, Client: cs, Clock: clock}, tk)
		sc.run(t, 2*time.Minute, nil) // idle: the tokens loop ticks at 0, 30, ... 120 s
		sc.run(t, offset, nil)
		og.add("worker", 20+i, nil)
		appeared := clock.Now()
		sc.run(t, time.Minute, func() bool { return og.ut(10, "ONEGATE_K8S_TOKEN") != "" })
		wait := clock.Now().Sub(appeared)
		t.Logf("VM appearing %s into the idle tick: token in OneGate after %s", offset, wait)
		worst = max(worst, wait)
		for _, x := range tokenSecrets(t, cs) {
			if err := deleteToken(context.Background(), cs, x.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if worst > DefaultTokensIdle+DefaultPublishEvery || worst < DefaultTokensIdle-2*time.Second {
		t.Errorf("worst wait %s, above one idle tick plus one publish tick", worst)
	}
}
