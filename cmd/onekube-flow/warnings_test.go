package main

import "strings"

// withoutWarnings drops the spec's warning lines (the default spec has 1
// master, which is not HA), leaving the failure's own line.
func withoutWarnings(stderr string) string {
	var keep []string
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(l, "warning ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}
