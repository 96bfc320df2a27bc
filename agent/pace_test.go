package agent

import (
	"testing"
	"time"

	"github.com/onekube/onekube/agent/system/systemtest"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

func TestPacerNext(t *testing.T) {
	t.Parallel()
	tun := DefaultTunables()
	// A grid start, so slots read plainly: the period boundary is 0.
	now := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name     string
		eta      time.Time
		min, max time.Duration
	}{
		{"no estimate: the backoff, ±50% of 2 s", time.Time{}, time.Second, 3 * time.Second},
		{"far: half the time left, on the slot", now.Add(40 * time.Second), 20 * time.Second, 22 * time.Second},
		{"very far: capped at a minute, on the slot", now.Add(time.Hour), farPollCap, farPollCap + 2*time.Second},
		{"close: the next slot", now.Add(3 * time.Second), time.Nanosecond, 2 * time.Second},
		{"just past: the next slot", now.Add(-10 * time.Second), time.Nanosecond, 2 * time.Second},
		{"long past: backoff from the close period", now.Add(-closeOverrun - time.Second), time.Second, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newPacer(7, &tun, systemtest.NewClock(now))
			got := p.next(now, tt.eta)
			if got < tt.min || got > tt.max {
				t.Errorf("next = %s, want within [%s, %s]", got, tt.min, tt.max)
			}
			if !tt.eta.IsZero() && tt.eta.Sub(now) > -closeOverrun {
				// On this VM's slot of the grid.
				if off := time.Duration(now.Add(got).UnixNano() % int64(tun.ClosePoll)); off != p.slot {
					t.Errorf("polls at offset %s of the period, want its slot %s", off, p.slot)
				}
			}
		})
	}
}

// TestPacerLoadAndDelay is the property behind issue 14's goal: workers
// arriving together, polling around the estimate, stay at N/ClosePoll
// requests a second in every 1-second window, and each sees the publish
// within ClosePoll.
func TestPacerLoadAndDelay(t *testing.T) {
	t.Parallel()
	tun := DefaultTunables()
	const n = 500
	start := time.Unix(1_800_000_000, 0)
	eta := start.Add(60 * time.Second)
	publish := start.Add(75 * time.Second) // the master is late
	perSecond := map[int64]int{}
	worst := time.Duration(0)
	for id := 100; id < 100+n; id++ {
		p := newPacer(id, &tun, systemtest.NewClock(start))
		at := start.Add(spreadOffset(id, tun.StartSpread))
		for at.Before(publish) {
			perSecond[at.Unix()]++
			at = at.Add(p.next(at, eta))
		}
		perSecond[at.Unix()]++ // the poll that sees it
		worst = max(worst, at.Sub(publish))
	}
	peak := 0
	for _, c := range perSecond {
		peak = max(peak, c)
	}
	if limit := n / 2; peak > limit+n/100 {
		t.Errorf("peak %d requests in one second, want about N/2 = %d at most", peak, limit)
	}
	if worst > tun.ClosePoll {
		t.Errorf("a worker saw the publish %s after it, want at most %s", worst, tun.ClosePoll)
	}
}

func TestSpreadOffsetCoversThePeriod(t *testing.T) {
	t.Parallel()
	period := 8 * time.Second
	buckets := make([]int, 8)
	for id := 1000; id < 1400; id++ {
		off := spreadOffset(id, period)
		if off < 0 || off >= period {
			t.Fatalf("VM %d: offset %s outside [0, %s)", id, off, period)
		}
		buckets[off/time.Second]++
	}
	for i, c := range buckets {
		if c < 48 || c > 52 {
			t.Errorf("second %d of the window holds %d of 400 VMs, want about 50", i, c)
		}
	}
}

func TestPublishedETA(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		ut   map[string]string
		want time.Time
	}{
		{"absent", map[string]string{}, time.Time{}},
		{"set", map[string]string{vmcontext.KeyPubETA: "2026-11-23T10:00:00Z"}, at},
		{"spaces", map[string]string{vmcontext.KeyPubETA: " 2026-11-23T10:00:00Z "}, at},
		{"malformed", map[string]string{vmcontext.KeyPubETA: "soon"}, time.Time{}},
		{"READY: history", map[string]string{vmcontext.KeyPubETA: "2026-11-23T10:00:00Z", vmcontext.KeyReady: "YES"}, time.Time{}},
	}
	for _, tt := range tests {
		if got := publishedETA(&onegate.VM{UserTemplate: tt.ut}); !got.Equal(tt.want) {
			t.Errorf("%s: publishedETA = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func FuzzPublishedETA(f *testing.F) {
	f.Add("2026-11-23T10:00:00Z")
	f.Add("2026-11-23T10:00:00+02:00")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		eta := publishedETA(&onegate.VM{UserTemplate: map[string]string{vmcontext.KeyPubETA: s}})
		if !eta.IsZero() {
			tun := DefaultTunables()
			p := newPacer(1, &tun, systemtest.NewClock(time.Unix(0, 0)))
			if d := p.next(time.Unix(1_800_000_000, 0), eta); d <= 0 || d > farPollCap+tun.MaxPollInterval*2 {
				t.Errorf("ETA %q: next poll in %s", s, d)
			}
		}
	})
}

// TestPacerClockSkew: each VM has its own clock, and the estimate is a time
// on the master's. A worker whose clock is off by S still sees the publish
// within ClosePoll + |S|, plus half of what an early master overestimated.
func TestPacerClockSkew(t *testing.T) {
	t.Parallel()
	tun := DefaultTunables()
	start := time.Unix(1_800_000_000, 0) // master's clock
	eta := start.Add(60 * time.Second)
	for _, skew := range []time.Duration{-30 * time.Second, -time.Second, 0, time.Second, 30 * time.Second} {
		for _, publish := range []time.Duration{45 * time.Second, 60 * time.Second, 75 * time.Second} {
			pub := start.Add(publish)
			worst := time.Duration(0)
			for id := 100; id < 150; id++ {
				p := newPacer(id, &tun, systemtest.NewClock(start))
				at := start // real (master) time of the next poll
				for at.Before(pub) {
					at = at.Add(p.next(at.Add(skew), eta))
				}
				worst = max(worst, at.Sub(pub))
			}
			if bound := tun.ClosePoll + skew.Abs() + max(0, eta.Sub(pub))/2; worst > bound {
				t.Errorf("skew %s, publish at +%s: seen %s after it, want at most %s", skew, publish, worst, bound)
			}
		}
	}
}
