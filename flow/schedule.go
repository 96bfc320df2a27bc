package flow

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// cronField is one field of a 5-field cron expression: its range and the
// names it accepts (jan..dec, sun..sat).
type cronField struct {
	name     string
	lo, hi   int
	names    []string
	namesOff int
}

var cronFields = []cronField{
	{name: "minute", lo: 0, hi: 59},
	{name: "hour", lo: 0, hi: 23},
	{name: "day of month", lo: 1, hi: 31},
	{name: "month", lo: 1, hi: 12, names: strings.Fields("jan feb mar apr may jun jul aug sep oct nov dec"), namesOff: 1},
	{name: "day of week", lo: 0, hi: 7, names: strings.Fields("sun mon tue wed thu fri sat")},
}

// CheckRecurrence checks a scheduled policy's cron expression the way
// OneFlow's parse-cron does: five fields of *, N, N-M, lists and /step.
func CheckRecurrence(expr string) error {
	fs := strings.Fields(expr)
	if len(fs) != len(cronFields) {
		return fmt.Errorf("recurrence %q: want 5 cron fields (minute hour day-of-month month day-of-week), got %d", expr, len(fs))
	}
	for i, f := range fs {
		if err := cronFields[i].check(f); err != nil {
			return fmt.Errorf("recurrence %q: %s: %w", expr, cronFields[i].name, err)
		}
	}
	return nil
}

func (c cronField) check(f string) error {
	for item := range strings.SplitSeq(f, ",") {
		rng, step, hasStep := strings.Cut(item, "/")
		if hasStep {
			if n, err := strconv.Atoi(step); err != nil || n < 1 {
				return fmt.Errorf("step %q is not a positive number", step)
			}
		}
		if rng == "*" {
			continue
		}
		lo, hi, isRange := strings.Cut(rng, "-")
		a, err := c.value(lo)
		if err != nil {
			return err
		}
		if isRange {
			b, err := c.value(hi)
			if err != nil {
				return err
			}
			if a > b {
				return fmt.Errorf("range %q runs backwards", rng)
			}
		}
	}
	return nil
}

func (c cronField) value(s string) (int, error) {
	for i, n := range c.names {
		if strings.EqualFold(s, n) {
			return i + c.namesOff, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < c.lo || v > c.hi {
		return 0, fmt.Errorf("%q is not in %d-%d", s, c.lo, c.hi)
	}
	return v, nil
}

// startTimeLayouts are the forms we can vouch for; Ruby's Time.parse
// accepts more, so an unknown form is a warning, not an error.
var startTimeLayouts = []string{
	time.RFC3339, "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02",
}

// checkStartTime returns an error for a start_time that is neither epoch
// seconds nor a known date layout.
func checkStartTime(s string) error {
	if s != "" && strings.Trim(s, "0123456789") == "" {
		return nil
	}
	for _, l := range startTimeLayouts {
		if _, err := time.Parse(l, s); err == nil {
			return nil
		}
	}
	return fmt.Errorf("start_time %q is neither epoch seconds nor YYYY-MM-DD hh:mm:ss", s)
}
