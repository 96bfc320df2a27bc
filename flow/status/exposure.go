package status

import (
	"fmt"
	"regexp"
	"strings"
)

// exposureRE is the only form a master publishes ONEGATE_K8S_EXPOSURE in
// (onegate.Exposure.String); anything else is a sibling's forgery or
// noise, and is not repeated to the terminal.
var exposureRE = regexp.MustCompile(`^restricted-bypass=(yes|no|unknown) update_by_id=(yes|no|unknown)$`)

// exposureText is a published exposure fit to show.
func exposureText(v string) string {
	if exposureRE.MatchString(v) {
		return v
	}
	return "unrecognised value"
}

// writeExposure is the table's line saying what OneGate lets any VM of the
// service do, as the masters probed it (docs/trust.md, "Hardening
// onegate-server.conf"); nothing when no master published it.
func writeExposure(b *strings.Builder, vms []Row) {
	var seen []string
	by := map[string][]string{}
	for _, v := range vms {
		if v.CP.Exposure == "" || v.ReadError != "" {
			continue
		}
		t := exposureText(v.CP.Exposure)
		if by[t] == nil {
			seen = append(seen, t)
		}
		by[t] = append(by[t], fmt.Sprint(v.ID))
	}
	switch len(seen) {
	case 0:
		return
	case 1:
		fmt.Fprintf(b, "onegate exposure: %s (docs/trust.md)\n", seen[0])
	default:
		var parts []string
		for _, t := range seen {
			parts = append(parts, "VM "+strings.Join(by[t], ",")+": "+t)
		}
		fmt.Fprintf(b, "onegate exposure: masters disagree: %s (docs/trust.md)\n", strings.Join(parts, "; "))
	}
}
