package fleet

import "time"

// timer is one sleeping actor's wake-up. seq breaks ties between timers of
// the same instant in the order they were set, so a dump reads in order.
type timer struct {
	when  time.Time
	seq   uint64
	actor *Actor
	ch    chan struct{} // closed when the timer fires
	index int           // in the heap, for removal on cancellation
}

// timerHeap is a min-heap of timers by (when, seq), for container/heap.
type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }

func (h timerHeap) Less(i, j int) bool {
	if !h[i].when.Equal(h[j].when) {
		return h[i].when.Before(h[j].when)
	}
	return h[i].seq < h[j].seq
}

func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(*h)
	*h = append(*h, t)
}

func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}
