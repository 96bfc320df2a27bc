package fleet

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// wake is what an actor saw when its sleep returned.
type wake struct {
	who string
	at  time.Duration
	err error
}

func newTestClock(t *testing.T, stall time.Duration) *VClock {
	c := NewVClock(t0, stall)
	t.Cleanup(c.Close)
	return c
}

// collect reads n wakes, failing the test if they take a real second.
func collect(t *testing.T, ch <-chan wake, n int) []wake {
	t.Helper()
	var out []wake
	for range n {
		select {
		case w := <-ch:
			out = append(out, w)
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of %d wakes: %v", len(out), n, out)
		}
	}
	return out
}

func TestVClockWakesInOrder(t *testing.T) {
	c := newTestClock(t, time.Minute)
	ch := make(chan wake, 3)
	hold := c.Hold("registering")
	for _, d := range []time.Duration{3, 1, 2} {
		a := c.Actor(d.String())
		go func() {
			defer a.Leave()
			err := a.Sleep(context.Background(), d*time.Second)
			ch <- wake{a.name, c.Since(), err}
		}()
	}
	hold()
	got := collect(t, ch, 3)
	for i, w := range got {
		if want := time.Duration(i+1) * time.Second; w.err != nil || w.at != want {
			t.Errorf("wake %d: %+v, want at %s", i, w, want)
		}
	}
}

func TestVClockSimultaneousWakeups(t *testing.T) {
	c := newTestClock(t, time.Minute)
	ch := make(chan wake, 4)
	hold := c.Hold("registering")
	for _, name := range []string{"slow", "quick"} {
		a := c.Actor(name)
		go func() {
			defer a.Leave()
			if err := a.Sleep(context.Background(), 5*time.Second); err != nil {
				ch <- wake{name, 0, err}
				return
			}
			if name == "slow" {
				// Real work after waking: the quick one, asleep
				// again already, must not move time meanwhile.
				time.Sleep(30 * time.Millisecond)
			}
			ch <- wake{name, c.Since(), nil}
			err := a.Sleep(context.Background(), time.Second)
			ch <- wake{name, c.Since(), err}
		}()
	}
	hold()
	seen := map[string]int{}
	for _, w := range collect(t, ch, 4) {
		seen[w.who]++
		// Each actor reads 5s after its first wake (for the slow one,
		// after its real work too) and 6s after its second.
		if want := time.Duration(4+seen[w.who]) * time.Second; w.err != nil || w.at != want {
			t.Errorf("%+v, want wake %d at %s", w, seen[w.who], want)
		}
	}
	if got := c.Since(); got != 6*time.Second {
		t.Errorf("ended at %s, want 6s", got)
	}
}

func TestVClockHoldStopsTime(t *testing.T) {
	c := newTestClock(t, time.Minute)
	a := c.Actor("sleeper")
	release := c.Hold("waiting for the simulator")
	ch := make(chan wake, 1)
	go func() {
		defer a.Leave()
		err := a.Sleep(context.Background(), time.Second)
		ch <- wake{a.name, c.Since(), err}
	}()
	select {
	case w := <-ch:
		t.Fatalf("woke under a hold: %+v", w)
	case <-time.After(50 * time.Millisecond):
	}
	if got := c.Since(); got != 0 {
		t.Fatalf("time moved under a hold: %s", got)
	}
	release()
	release() // a second call does nothing
	if w := collect(t, ch, 1)[0]; w.err != nil || w.at != time.Second {
		t.Errorf("%+v, want a wake at 1s", w)
	}
}

func TestVClockSleepCancelled(t *testing.T) {
	c := newTestClock(t, time.Minute)
	busy := c.Actor("busy") // running: time cannot move
	a := c.Actor("sleeper")
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan wake, 2)
	go func() {
		defer a.Leave()
		err := a.Sleep(ctx, 10*time.Second)
		ch <- wake{a.name, c.Since(), err}
		err = a.Sleep(context.Background(), 2*time.Second)
		ch <- wake{a.name, c.Since(), err}
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	if w := collect(t, ch, 1)[0]; !errors.Is(w.err, context.Canceled) || w.at != 0 {
		t.Fatalf("%+v, want context.Canceled at 0s", w)
	}
	busy.Leave()
	// The cancelled timer is gone: the next wake is the 2 s sleep.
	if w := collect(t, ch, 1)[0]; w.err != nil || w.at != 2*time.Second {
		t.Errorf("%+v, want a wake at 2s", w)
	}
}

func TestVClockDetectsDeadlock(t *testing.T) {
	for name, tc := range map[string]struct {
		setup func(c *VClock, unblock <-chan struct{})
		want  string
	}{
		"actor blocked outside the clock": {
			setup: func(c *VClock, unblock <-chan struct{}) {
				stuck := c.Actor("vm 1 stuck")
				go func() { <-unblock; stuck.Leave() }()
			},
			want: "vm 1 stuck: running",
		},
		"hold never released": {
			setup: func(c *VClock, _ <-chan struct{}) { c.Hold("the simulator creating workers") },
			want:  "[the simulator creating workers]",
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := newTestClock(t, 40*time.Millisecond)
			unblock := make(chan struct{})
			defer close(unblock)
			tc.setup(c, unblock)
			a := c.Actor("vm 2 sleeper")
			ch := make(chan wake, 1)
			go func() {
				defer a.Leave()
				err := a.Sleep(context.Background(), time.Second)
				ch <- wake{a.name, c.Since(), err}
			}()
			w := collect(t, ch, 1)[0]
			if !errors.Is(w.err, ErrDeadlock) {
				t.Fatalf("%+v, want ErrDeadlock", w)
			}
			for _, s := range []string{tc.want, "vm 2 sleeper: asleep until 1s"} {
				if !strings.Contains(w.err.Error(), s) {
					t.Errorf("dump lacks %q:\n%v", s, w.err)
				}
			}
			select {
			case <-c.Dead():
			default:
				t.Error("Dead not closed")
			}
		})
	}
}

func TestVClockRefusesTwoSleepersInOneActor(t *testing.T) {
	c := newTestClock(t, time.Minute)
	a := c.Actor("vm 3")
	other := c.Actor("other") // keeps time still
	defer other.Leave()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() { errs <- a.Sleep(context.Background(), time.Second) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, ErrDeadlock) || !strings.Contains(err.Error(), "two goroutines") {
			t.Errorf("got %v, want the clock failed naming two goroutines", err)
		}
	}
}
