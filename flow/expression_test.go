package flow

import "testing"

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
