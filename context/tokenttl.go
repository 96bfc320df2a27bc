package context

import (
	"fmt"
	"time"
)

// Bounds of ONEAPP_K8S_TOKEN_TTL. serve mints a join token only while a VM
// waits and refreshes it before it expires, so a long lifetime buys
// nothing but a longer-lived credential. The floor leaves room for the
// refresh: a token is replaced once less than max(TTL/2, 2×the worker's
// safety margin of 5 min) is left, and workers refuse one with less than
// the margin left.
const (
	MinTokenTTL = 15 * time.Minute
	MaxTokenTTL = 24 * time.Hour
)

// ParseTokenTTL reads a token lifetime and checks its bounds.
func ParseTokenTTL(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration like 1h or 90m", s)
	}
	if d < MinTokenTTL || d > MaxTokenTTL {
		return 0, fmt.Errorf("%s is outside %s to %s: join tokens are short-lived and refreshed while a VM waits", d, fmtTTL(MinTokenTTL), fmtTTL(MaxTokenTTL))
	}
	return d, nil
}

func fmtTTL(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return fmt.Sprintf("%dm", d/time.Minute)
}
