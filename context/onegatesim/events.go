package onegatesim

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// EventKind names what happened.
type EventKind string

// Event kinds on the timeline.
const (
	EventServiceCreated EventKind = "service-created"
	EventVMCreated      EventKind = "vm-created"
	EventVMRemoved      EventKind = "vm-removed"
	EventVMUpdated      EventKind = "vm-updated" // Detail: the attribute names written, never values
	EventVMErased       EventKind = "vm-erased"
	EventVMReady        EventKind = "vm-ready"
	EventVMAction       EventKind = "vm-action"
	EventVMState        EventKind = "vm-state" // Detail: the new state, as oned names it
	EventRoleState      EventKind = "role-state"
	EventServiceState   EventKind = "service-state"
	EventScale          EventKind = "scale"
	EventFault          EventKind = "fault" // a request answered by an injected fault
	EventError          EventKind = "error"
)

// Event is one entry of the timeline. VMID is -1 when no VM is concerned.
type Event struct {
	Seq       int
	Time      time.Time
	Kind      EventKind
	ServiceID int
	Role      string
	VMID      int
	Detail    string
}

func (e Event) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s #%d %s service=%d", e.Time.Format("15:04:05.000"), e.Seq, e.Kind, e.ServiceID)
	if e.Role != "" {
		fmt.Fprintf(&b, " role=%s", e.Role)
	}
	if e.VMID >= 0 {
		fmt.Fprintf(&b, " vm=%d", e.VMID)
	}
	if e.Detail != "" {
		b.WriteString(" " + e.Detail)
	}
	return b.String()
}

// record appends an event and wakes waiters. Callers hold s.mu.
func (s *Sim) record(kind EventKind, svc, vmid int, role, detail string) {
	e := Event{Seq: len(s.events) + 1, Time: s.o.Clock(), Kind: kind, ServiceID: svc, Role: role, VMID: vmid, Detail: detail}
	s.events = append(s.events, e)
	s.o.Logf("onegatesim: %s", e)
	s.broadcast()
}

// broadcast wakes every waiter so it re-evaluates its condition. Callers hold s.mu.
func (s *Sim) broadcast() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Events returns a copy of the timeline so far.
func (s *Sim) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// WaitFor blocks until cond holds, re-checking it after every change of the
// simulator's state. cond runs without the simulator's lock held, so it may
// call any method. A context without deadline gets DefaultWaitTimeout.
func (s *Sim) WaitFor(ctx context.Context, what string, cond func() bool) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultWaitTimeout)
		defer cancel()
	}
	for {
		s.mu.Lock()
		ch, closed := s.changed, s.closed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		if closed {
			return fmt.Errorf("waiting for %s: %w", what, ErrClosed)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
}

// WaitReady waits until VM vmid has reported READY=YES.
func (s *Sim) WaitReady(ctx context.Context, vmid int) error {
	return s.WaitFor(ctx, fmt.Sprintf("VM %d READY=YES", vmid), func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		v := s.vms[vmid]
		return v != nil && s.isReady(v)
	})
}

// WaitServiceRunning waits until every instantiated service is RUNNING. A
// service that fails to deploy ends the wait at once with ErrServiceFailed
// and the simulator's reason (say, an exhausted address pool), instead of
// leaving the caller to a timeout.
func (s *Sim) WaitServiceRunning(ctx context.Context) error {
	var failed error
	err := s.WaitFor(ctx, "every service RUNNING", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.services) == 0 {
			return false
		}
		running := true
		for _, svc := range s.services {
			if svc.state == stateFailedDeploying {
				failed = fmt.Errorf("%w: service %d: %s", ErrServiceFailed, svc.id, s.lastError(svc.id))
				return true
			}
			running = running && svc.state == stateRunning
		}
		return running
	})
	if failed != nil {
		return failed
	}
	return err
}

// lastError is the detail of the service's latest error event. Callers hold s.mu.
func (s *Sim) lastError(svc int) string {
	for i := len(s.events) - 1; i >= 0; i-- {
		if e := s.events[i]; e.ServiceID == svc && e.Kind == EventError {
			return "role " + e.Role + ": " + e.Detail
		}
	}
	return "FAILED_DEPLOYING"
}

// WaitRoleVMs waits until the role of the service has exactly n VMs.
func (s *Sim) WaitRoleVMs(ctx context.Context, serviceID int, role string, n int) error {
	return s.WaitFor(ctx, fmt.Sprintf("service %d role %s with %d VMs", serviceID, role, n), func() bool {
		return len(s.RoleVMs(serviceID, role)) == n
	})
}
