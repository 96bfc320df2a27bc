package fleet

import (
	"container/heap"
	"context"
	"fmt"
	"time"

	"github.com/onekube/onekube/agent/system"
)

// Actor is one VM's view of a VClock: the agent's system.Clock. Its Sleep
// is the only way the VM's goroutine lets virtual time pass.
type Actor struct {
	c     *VClock
	name  string
	timer *timer // set while asleep; guarded by c.mu
	left  bool
}

var _ system.Clock = (*Actor)(nil)

// Now returns the shared virtual time.
func (a *Actor) Now() time.Time { return a.c.Now() }

// Sleep blocks until virtual time reached now+d, ctx is done, or the clock
// failed. One actor sleeping from two goroutines at once would let time
// run while one of its goroutines works, so that fails the clock loudly.
func (a *Actor) Sleep(ctx context.Context, d time.Duration) error {
	c := a.c
	c.mu.Lock()
	switch {
	case c.err != nil:
		c.mu.Unlock()
		return c.err
	case ctx.Err() != nil:
		c.mu.Unlock()
		return ctx.Err()
	case a.left:
		c.failLocked(fmt.Sprintf("%s slept after leaving", a.name))
		c.mu.Unlock()
		return c.Err()
	case a.timer != nil:
		c.failLocked(fmt.Sprintf("%s slept from two goroutines at once: give the second goroutine an actor of its own", a.name))
		c.mu.Unlock()
		return c.Err()
	case d <= 0:
		c.mu.Unlock()
		return nil
	}
	t := &timer{when: c.now.Add(d), seq: c.seq, actor: a, ch: make(chan struct{})}
	c.seq++
	heap.Push(&c.timers, t)
	a.timer = t
	c.asleep++
	c.gen++
	c.advanceLocked()
	c.mu.Unlock()

	select {
	case <-t.ch:
		return nil
	case <-c.dead:
		return c.Err()
	case <-ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		if a.timer != t {
			return nil // fired as ctx ended: the sleep is over anyway
		}
		heap.Remove(&c.timers, t.index)
		a.timer = nil
		c.asleep--
		c.gen++
		return ctx.Err()
	}
}

// Leave ends the actor: time no longer waits for it.
func (a *Actor) Leave() {
	c := a.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.left {
		return
	}
	a.left = true
	delete(c.actors, a)
	c.gen++
	c.advanceLocked()
}
