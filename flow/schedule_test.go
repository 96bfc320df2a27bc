package flow

import "testing"

func TestCheckRecurrence(t *testing.T) {
	t.Parallel()
	good := []string{"* * * * *", "0 8 * * 1-5", "*/15 * * * *", "0 22 * * mon-fri", "0 0 1 jan,jul *", "0,30 8-18/2 * * 0,7"}
	bad := []string{"", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "* * * * 8",
		"*/0 * * * *", "5-1 * * * *", "a * * * *", "* * * * fri-mon"}
	for _, e := range good {
		if err := CheckRecurrence(e); err != nil {
			t.Errorf("%q: %v", e, err)
		}
	}
	for _, e := range bad {
		if err := CheckRecurrence(e); err == nil {
			t.Errorf("%q accepted", e)
		}
	}
	for s, ok := range map[string]bool{"1700000000": true, "2026-01-02 10:00:00": true, "2026-01-02": true, "soon": false, "": false} {
		if err := checkStartTime(s); (err == nil) != ok {
			t.Errorf("start time %q: %v", s, err)
		}
	}
}
