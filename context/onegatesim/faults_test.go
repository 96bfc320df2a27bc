package onegatesim

import (
	"net/http"
	"sync"
	"testing"
	"time"
)

func TestFaults(t *testing.T) {
	var mu sync.Mutex
	now := fixedClock()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	h := newHarness(t, Options{Clock: clock})
	h.instantiate(simpleTemplate("none", false, 1, 1, ""), "")
	get := func(vm int) int { return h.do(req{method: "GET", path: "/vm", vm: vm}).status }

	remove := h.sim.InjectFault(Fault{Kind: FaultStatus, Status: 503, Count: 2})
	if a, b, c := get(100), get(101), get(100); a != 503 || b != 503 || c != 200 {
		t.Errorf("count fault: %d %d %d, want 503 503 200", a, b, c)
	}
	remove()

	h.sim.InjectFault(Fault{Kind: FaultStatus, Status: 500, For: time.Minute, VMs: []int{101}})
	if a, b := get(100), get(101); a != 200 || b != 500 {
		t.Errorf("VM filter: %d %d", a, b)
	}
	advance(2 * time.Minute)
	if b := get(101); b != 200 {
		t.Errorf("after the window: %d", b)
	}

	h.sim.InjectFault(Fault{Kind: FaultStatus, Status: 500, Body: "boom", Routes: []string{RoutePutVM}, Count: 1})
	if a := get(100); a != 200 {
		t.Errorf("route filter let GET fail: %d", a)
	}
	if r := h.putForm(100, "/vm", "A=1", 1); r.status != 500 || r.body != "boom" {
		t.Errorf("PUT under fault: %d %q", r.status, r.body)
	}
	if ut := h.sim.UserTemplate(100); ut["A"] != "" {
		t.Error("a failed request changed state")
	}

	h.sim.InjectFault(Fault{Kind: FaultDrop, Count: 1})
	hr, _ := http.NewRequest("GET", h.url+"/vm", nil)
	// A fresh connection: on a reused one Go's Transport would retry the
	// idempotent GET once and hide the drop.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if res, err := fresh.Do(hr); err == nil {
		res.Body.Close()
		t.Errorf("dropped connection answered %d", res.StatusCode)
	}

	h.sim.InjectFault(Fault{Kind: FaultLatency, Latency: 60 * time.Millisecond, Count: 1})
	start := time.Now()
	if a := get(100); a != 200 {
		t.Errorf("latency fault changed the answer: %d", a)
	}
	if d := time.Since(start); d < 60*time.Millisecond {
		t.Errorf("latency fault served in %v", d)
	}
	if tot := h.sim.TotalStats(); tot.Status[503] != 2 || tot.Requests[RoutePutVM] != 1 || tot.Total < 9 || tot.BytesOut == 0 {
		t.Errorf("TotalStats = %+v", tot)
	}
	var faults int
	for _, e := range h.sim.Events() {
		if e.Kind == EventFault {
			faults++
		}
	}
	if faults != 5 { // two 503s, one 500 per filter, one drop; latency is not an event
		t.Errorf("fault events = %d, want 5", faults)
	}
}
