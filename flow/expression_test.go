package flow

import (
	"strings"
	"testing"
	"time"
)

func TestCheckExpression(t *testing.T) {
	t.Parallel()
	good := []string{
		"CPU > 80", "CPU>80", " CPU > 80 ", "MEMORY <= 50.5", "CPU == 1", "CPU = 1", "CPU != 1", "CPU <> 1",
		"CPU >= -1", "1 < CPU", "CPU > 80 && MEMORY > 70", "CPU > 80 & MEMORY > 70", "CPU > 80 || A < 1 | B < 2",
		"!CPU > 80", "! (CPU > 80)", "(CPU > 80 && MEM > 1) || X < 2", `"CPU" > 80`, "'CPU' > 80", "ATTR_1 < 3",
	}
	bad := []string{
		"", "CPU", "CPU > ", "> 80", "CPU >> 80", "CPU > 80 &&", "(CPU > 80", "CPU > 80)", "1CPU > 2",
		"CPU\t> 80", "CPU > 80.", `"CPU' > 80`, "CPU > 80 AND MEM > 1", "_CPU > 1", "CPU > 80 &&& X > 1",
	}
	for _, e := range good {
		if err := CheckExpression(e); err != nil {
			t.Errorf("%q: %v", e, err)
		}
	}
	for _, e := range bad {
		if err := CheckExpression(e); err == nil {
			t.Errorf("%q accepted", e)
		}
	}
}

func FuzzCheckExpression(f *testing.F) {
	for _, s := range []string{"CPU > 80", "!(A<1)||B>2", "(("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = CheckExpression(s) // must terminate without panicking
	})
}

// A PEG parsed naively tries boolean_exp's logic_cond and then the same
// logic_cond again as the other choice: twice per nesting level, 4^depth
// steps over "((((...". A hand-written template must not hang validate.
func TestCheckExpressionDeepNesting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		depth, closing int
		ok             bool
	}{{200, 200, true}, {200, 199, false}, {5000, 5000, true}} {
		s := strings.Repeat("(", tc.depth) + "A > 1 && B < 2" + strings.Repeat(")", tc.closing)
		done := make(chan error, 1)
		go func() { done <- CheckExpression(s) }()
		select {
		case err := <-done:
			if (err == nil) != tc.ok {
				t.Errorf("depth %d, %d closing: %v", tc.depth, tc.closing, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("depth %d, %d closing: CheckExpression still running after 5 s", tc.depth, tc.closing)
		}
	}
}
