package autoscale

import (
	"strings"
	"testing"
)

func TestParseBounds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in      string
		want    Bounds
		on      bool
		errPart string
	}{
		{in: "", on: false},
		{in: "  ", on: false},
		{in: "1:5", want: Bounds{1, 5}, on: true},
		{in: " 0:3 ", want: Bounds{0, 3}, on: true},
		{in: "2:2", want: Bounds{2, 2}, on: true},
		{in: "0:1000", want: Bounds{0, 1000}, on: true},
		{in: "5", errPart: "want min:max"},
		{in: "5:1", errPart: "min is above max"},
		{in: "0:0", errPart: "at least 1"},
		{in: "-1:3", errPart: "not a decimal"},
		{in: "+1:3", errPart: "not a decimal"},
		{in: "01:3", errPart: "leading zero"},
		{in: "1: 3", errPart: "not a decimal"},
		{in: "1:3:5", errPart: "not a decimal"},
		{in: ":3", errPart: "empty"},
		{in: "1:", errPart: "empty"},
		{in: "1:1001", errPart: "above 1000"},
		{in: "1:99999999999999999999", errPart: "above 1000"},
		{in: "1.5:3", errPart: "not a decimal"},
		{in: "1:３", errPart: "not a decimal"},
	} {
		got, on, err := ParseBounds(c.in)
		if c.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), c.errPart) || on {
				t.Errorf("ParseBounds(%q) = %v, %v, %v; want an error with %q", c.in, got, on, err, c.errPart)
			}
			continue
		}
		if err != nil || on != c.on || got != c.want {
			t.Errorf("ParseBounds(%q) = %v, %v, %v; want %v, %v", c.in, got, on, err, c.want, c.on)
		}
	}
}

// FuzzParseBounds: whatever the context holds, the parser answers (no
// panic), never enables out-of-range bounds, and reads back what it
// accepted.
func FuzzParseBounds(f *testing.F) {
	for _, s := range []string{"", "1:5", "0:1", "5:1", "01:2", "-1:2", "1:1001", "a:b", "1:2:3", " 2:3 ", "1:\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, on, err := ParseBounds(s)
		if err != nil {
			if on {
				t.Fatalf("ParseBounds(%q): error and on", s)
			}
			if len(err.Error()) > 200 {
				t.Fatalf("ParseBounds(%q): error of %d bytes", s, len(err.Error()))
			}
			return
		}
		if !on {
			if strings.TrimSpace(s) != "" {
				t.Fatalf("ParseBounds(%q): off without an error", s)
			}
			return
		}
		if b.Min < 0 || b.Max < 1 || b.Min > b.Max || b.Max > MaxWorkers {
			t.Fatalf("ParseBounds(%q) = %+v: out of range", s, b)
		}
		if got, on2, err2 := ParseBounds(strings.TrimSpace(s)); err2 != nil || !on2 || got != b {
			t.Fatalf("ParseBounds(%q) is not stable", s)
		}
	})
}
