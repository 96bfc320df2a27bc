package status

import (
	"fmt"
	"strings"
	"time"
)

// CertsWarnBefore is how close to its leaves' expiry a master counts as
// failed. serve renews 30 days ahead by default (docs/certificates.md), so
// a master this close has missed three weeks of attempts: the owner must
// act now, whether serve reported an error or died without one.
const CertsWarnBefore = 7 * 24 * time.Hour

// certsReasons are the failures of the masters' certificates at now: a
// published renewal error, and leaves that expire within CertsWarnBefore
// or already did. Display only, like every published value: a sibling can
// forge these, and all a forgery gains is a false alarm.
func certsReasons(rows []Row, now time.Time) (failed []string) {
	for _, r := range rows {
		if r.CP.CertsError != "" {
			failed = append(failed, fmt.Sprintf("VM %d (%s) cannot renew its certificates: %s", r.ID, r.Role, r.CP.CertsError))
		}
		exp, ok := certsExpiry(r.CP.Certs)
		if !ok {
			continue
		}
		switch left := exp.Sub(now); {
		case left <= 0:
			failed = append(failed, fmt.Sprintf("VM %d (%s): certificates expired at %s", r.ID, r.Role, exp.Format(time.RFC3339)))
		case left < CertsWarnBefore:
			failed = append(failed, fmt.Sprintf("VM %d (%s): certificates expire at %s, in %s, and are not renewed yet",
				r.ID, r.Role, exp.Format(time.RFC3339), left.Round(time.Minute)))
		}
	}
	return failed
}

// certsExpiry reads the expiry out of ONEGATE_K8S_CERTS,
// "expires=<RFC 3339> renewed=<RFC 3339|never>" (serve's CertsValue); ok
// is false for anything else.
func certsExpiry(v string) (time.Time, bool) {
	f := strings.Fields(v)
	if len(f) == 0 {
		return time.Time{}, false
	}
	s, found := strings.CutPrefix(f[0], "expires=")
	if !found {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}
