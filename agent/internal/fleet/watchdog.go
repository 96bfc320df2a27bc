package fleet

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// dumpLimit bounds the actors listed in a dump (500 VMs would drown it).
const dumpLimit = 40

// watch fails the clock when nothing changed for stall of real time while
// an actor is alive or a hold is taken: an actor blocked outside the
// clock, or a hold never released, would otherwise hang the run.
func (c *VClock) watch(stall time.Duration) {
	tick := time.NewTicker(max(stall/4, time.Millisecond))
	defer tick.Stop()
	var seen uint64
	since := time.Now()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
		c.mu.Lock()
		busy := len(c.actors) > 0 || len(c.holds) > 0
		switch {
		case c.err != nil:
			c.mu.Unlock()
			return
		case c.gen != seen || !busy:
			seen, since = c.gen, time.Now()
		case time.Since(since) >= stall:
			c.failLocked(fmt.Sprintf("nothing changed for %s of real time", stall))
		}
		c.mu.Unlock()
	}
}

// dumpLocked describes the clock and every live actor: running, or asleep
// until when. Callers hold c.mu.
func (c *VClock) dumpLocked() string {
	var b strings.Builder
	fmt.Fprintf(&b, "virtual time %s; %d live actors, %d asleep; %d timers; holds:", c.now.Sub(c.start), len(c.actors), c.asleep, len(c.timers))
	if len(c.holds) == 0 {
		b.WriteString(" none")
	}
	for _, why := range c.holds {
		fmt.Fprintf(&b, " [%s]", why)
	}
	var lines []string
	for a := range c.actors {
		state := "running (not in Sleep: working, in a request, or blocked outside the clock)"
		if a.timer != nil {
			state = fmt.Sprintf("asleep until %s", a.timer.when.Sub(c.start))
		}
		lines = append(lines, fmt.Sprintf("  %s: %s", a.name, state))
	}
	slices.Sort(lines)
	for i, l := range lines {
		if i == dumpLimit {
			fmt.Fprintf(&b, "\n  ... and %d more", len(lines)-dumpLimit)
			break
		}
		b.WriteString("\n" + l)
	}
	return b.String()
}
