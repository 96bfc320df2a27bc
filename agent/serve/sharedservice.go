package serve

import (
	"context"
	"sync"
	"time"

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/system"
)

// SharedService lets the acting master's loops share one GET /service:
// a loop asking for a view no older than maxAge gets the last read when it
// is young enough. The tokens loop reads fresh each tick; the cleanup
// loop, which ticks slower, rides on those reads and costs OneGate
// nothing while tokens runs.
type SharedService struct {
	OneGate gate.OneGate
	Clock   system.Clock

	mu sync.Mutex
	at time.Time
	v  serviceView
}

func (s *SharedService) read(ctx context.Context, maxAge time.Duration) (serviceView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.Clock.Now()
	if !s.at.IsZero() && maxAge > 0 && now.Sub(s.at) <= maxAge {
		return s.v, nil
	}
	v, err := readService(ctx, s.OneGate)
	if err != nil {
		return serviceView{}, err
	}
	s.v, s.at = v, now
	return v, nil
}

// serviceOf reads through shared when there is one.
func serviceOf(ctx context.Context, shared *SharedService, og gate.OneGate, maxAge time.Duration) (serviceView, error) {
	if shared == nil {
		return readService(ctx, og)
	}
	return shared.read(ctx, maxAge)
}
