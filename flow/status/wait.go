package status

import (
	"context"
	"math/rand/v2"
	"time"
)

// DefaultInterval is how often Wait polls, before jitter.
const DefaultInterval = 5 * time.Second

// Poll tunes Wait; the zero value polls every DefaultInterval ±20% on the
// real clock.
type Poll struct {
	Interval time.Duration
	// Sleep waits d or until ctx ends (then returns ctx.Err()).
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter spreads d so many operators' polls do not align.
	Jitter func(d time.Duration) time.Duration
	// Progress sees every report that is not final, and every failed
	// re-read (err non-nil, r the last good report).
	Progress func(r Report, err error)
}

// Wait fetches service id until the outcome is Ready or Failed, or ctx
// ends; it then returns the last report, whose outcome says which. Only a
// failure of the first read is an error: later ones are reported to
// Progress and retried, since a long wait should survive a network blip.
func (f *Fetcher) Wait(ctx context.Context, id int, p Poll) (Report, error) {
	if p.Interval <= 0 {
		p.Interval = DefaultInterval
	}
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	if p.Jitter == nil {
		p.Jitter = jitter
	}
	last, err := f.Fetch(ctx, id)
	if err != nil {
		return last, err
	}
	progress := func(r Report, err error) {
		if p.Progress != nil {
			p.Progress(r, err)
		}
	}
	if last.Outcome == InProgress {
		progress(last, nil)
	}
	for last.Outcome == InProgress {
		if p.Sleep(ctx, p.Jitter(p.Interval)) != nil {
			return last, nil
		}
		r, err := f.Fetch(ctx, id)
		if ctx.Err() != nil {
			return last, nil
		}
		if err != nil {
			progress(last, err)
			continue
		}
		last = r
		if last.Outcome == InProgress {
			progress(last, nil)
		}
	}
	return last, nil
}

func jitter(d time.Duration) time.Duration {
	return d*4/5 + rand.N(d*2/5+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
