package onegatesim

import (
	"strings"
	"testing"
	"time"
)

// TestSetCreated: the STIME set shows in the extended service document;
// an unknown VM is an error.
func TestSetCreated(t *testing.T) {
	t.Parallel()
	h := runningService(t, "7.4")
	at := time.Unix(1700000000, 0)
	if err := h.sim.SetCreated(101, at); err != nil {
		t.Fatal(err)
	}
	r := h.do(req{method: "GET", path: "/service?extended=true", vm: 101})
	if !strings.Contains(r.body, `"STIME":"1700000000"`) {
		t.Errorf("extended service document lacks the STIME set:\n%.2000s", r.body)
	}
	if err := h.sim.SetCreated(999, at); err == nil {
		t.Error("SetCreated on an unknown VM succeeded")
	}
}
