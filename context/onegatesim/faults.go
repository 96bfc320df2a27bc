package onegatesim

import (
	"fmt"
	"net/http"
	"slices"
	"time"
)

// FaultKind selects what an injected fault does to a matching request.
type FaultKind int

const (
	// FaultLatency delays the request by Latency, then serves it normally.
	FaultLatency FaultKind = iota
	// FaultStatus answers Status (500, 503...) with Body instead of serving.
	FaultStatus
	// FaultDrop closes the connection without any response. Note that Go's
	// http.Transport retries an idempotent request (GET, PUT with a
	// rewindable body) once when a reused connection closes unanswered.
	FaultDrop
)

// Fault describes a fault to inject. Zero filters match everything.
type Fault struct {
	Kind    FaultKind
	Latency time.Duration // FaultLatency
	Status  int           // FaultStatus (default 500)
	Body    string        // FaultStatus (default: the status text)
	// ContentType of a FaultStatus answer ("": the JSON type every answer
	// carries); "text/html;charset=utf-8" for the debug page Sinatra's
	// development mode serves on an unhandled error.
	ContentType string
	// Count limits the fault to the next Count matching requests (0: no limit).
	Count int
	// For limits the fault to a window starting now (0: no limit).
	For time.Duration
	// VMs limits the fault to requests claiming these VM IDs.
	VMs []int
	// Routes limits the fault to these route patterns ("PUT /vm", "GET /vms/:id").
	Routes []string
}

type faultEntry struct {
	id    int
	f     Fault
	until time.Time
	left  int // remaining requests when f.Count > 0
}

// InjectFault adds a fault, effective for requests arriving from now on, and
// returns a function removing it. Faults may be added and removed while
// requests are being served.
func (s *Sim) InjectFault(f Fault) (remove func()) {
	if f.Kind == FaultStatus && f.Status == 0 {
		f.Status = http.StatusInternalServerError
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faultSeq++
	e := &faultEntry{id: s.faultSeq, f: f, left: f.Count}
	if f.For > 0 {
		e.until = s.o.Clock().Add(f.For)
	}
	s.faults = append(s.faults, e)
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.faults = slices.DeleteFunc(s.faults, func(x *faultEntry) bool { return x == e })
	}
}

// ClearFaults removes every injected fault.
func (s *Sim) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// faultsFor consumes the faults matching a request: the total latency to add
// and at most one terminal fault (status or drop), the earliest injected.
func (s *Sim) faultsFor(vmid int, route string) (delay time.Duration, term *Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Clock()
	keep := s.faults[:0]
	for _, e := range s.faults {
		if !e.until.IsZero() && now.After(e.until) {
			continue // window over
		}
		matches := (len(e.f.VMs) == 0 || slices.Contains(e.f.VMs, vmid)) &&
			(len(e.f.Routes) == 0 || slices.Contains(e.f.Routes, route))
		if matches && (e.f.Kind == FaultLatency || term == nil) {
			if e.f.Kind == FaultLatency {
				delay += e.f.Latency
			} else {
				f := e.f
				term = &f
				s.record(EventFault, -1, vmid, "", fmt.Sprintf("%s %s", faultName(f), route))
			}
			if e.f.Count > 0 {
				e.left--
				if e.left == 0 {
					continue // used up
				}
			}
		}
		keep = append(keep, e)
	}
	s.faults = keep
	return delay, term
}

func faultName(f Fault) string {
	if f.Kind == FaultDrop {
		return "drop"
	}
	return fmt.Sprintf("status %d", f.Status)
}
