package fleet

import (
	"container/heap"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrDeadlock is returned by every Sleep once the clock found that nothing
// can make progress; VClock.Err wraps it with a dump of every actor.
var ErrDeadlock = errors.New("virtual clock: no progress possible")

// VClock is a discrete-event clock shared by every agent of a fleet. Time
// stands still while any actor works (runs code, waits for an HTTP answer),
// and jumps to the earliest timer only once every live actor sleeps and no
// hold is taken; all timers due at that instant fire together. So hundreds
// of agents see production waits (minutes) in seconds of real time, and a
// request in flight never sees time pass: OneGate answers in 0 virtual s.
//
// An actor is one goroutine that sleeps only through its own Actor (one
// per VM); the clock cannot tell a running goroutine from a blocked one,
// so whatever the harness waits for outside the clock (the simulator
// creating VMs) it covers with Hold.
type VClock struct {
	mu     sync.Mutex
	start  time.Time
	now    time.Time
	timers timerHeap
	seq    uint64
	actors map[*Actor]struct{} // live ones
	asleep int
	holds  map[int]string // id -> why, for the dump
	holdID int
	// gen changes with every event; the watchdog reads a stall from it.
	gen  uint64
	err  error
	dead chan struct{} // closed on failure
	stop chan struct{}
}

// NewVClock starts a clock at start. If nothing changes for stall of real
// time while an actor is alive or a hold is taken, the clock fails with a
// dump (Err, Dead) and every Sleep returns the error: a run never hangs.
func NewVClock(start time.Time, stall time.Duration) *VClock {
	c := &VClock{start: start, now: start, actors: map[*Actor]struct{}{}, holds: map[int]string{},
		dead: make(chan struct{}), stop: make(chan struct{})}
	go c.watch(stall)
	return c
}

// Close stops the watchdog.
func (c *VClock) Close() { close(c.stop) }

// Now returns the virtual time.
func (c *VClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Since is the virtual time elapsed since the clock started.
func (c *VClock) Since() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now.Sub(c.start)
}

// Err is nil, or ErrDeadlock wrapped with a dump of the actors.
func (c *VClock) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Dead is closed once the clock failed.
func (c *VClock) Dead() <-chan struct{} { return c.dead }

// Actor registers a live actor named name (for dumps). It counts as
// running until it sleeps, and keeps time from advancing until it does or
// leaves.
func (c *VClock) Actor(name string) *Actor {
	a := &Actor{c: c, name: name}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.actors[a] = struct{}{}
	c.gen++
	return a
}

// Hold keeps time still until release is called (once; later calls do
// nothing), for a wait on something real, such as the simulator creating
// VMs after a request that already returned.
func (c *VClock) Hold(why string) (release func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holdID++
	id := c.holdID
	c.holds[id] = why
	c.gen++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			delete(c.holds, id)
			c.gen++
			c.advanceLocked()
		})
	}
}

// advanceLocked moves time to the earliest timer when every live actor
// sleeps and nothing holds the clock, and wakes every actor due then. The
// woken actors count as running before this returns, so time cannot move
// again until they have all slept or left. Callers hold c.mu.
func (c *VClock) advanceLocked() {
	if c.err != nil || len(c.holds) > 0 || len(c.actors) == 0 || c.asleep < len(c.actors) {
		return
	}
	if len(c.timers) == 0 {
		// Every live actor asleep with no timer: a bookkeeping bug.
		c.failLocked("every actor asleep, no timer pending")
		return
	}
	c.now = c.timers[0].when
	for len(c.timers) > 0 && !c.timers[0].when.After(c.now) {
		t := heap.Pop(&c.timers).(*timer)
		t.actor.timer = nil
		c.asleep--
		close(t.ch)
	}
	c.gen++
}

// Fail stops the clock from outside (a real-time bound passed): every
// sleeper returns ErrDeadlock, with why and a dump.
func (c *VClock) Fail(why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failLocked(why)
}

// failLocked stops the clock for good: every sleeper returns the error.
// Callers hold c.mu.
func (c *VClock) failLocked(why string) {
	if c.err != nil {
		return
	}
	c.err = fmt.Errorf("%w: %s\n%s", ErrDeadlock, why, c.dumpLocked())
	close(c.dead)
}
