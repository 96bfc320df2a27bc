package status

import (
	"strings"
	"testing"
	"time"
)

// A master that cannot renew, or whose leaves expire within a week or
// already did, fails the report (exit 1), with the reason named; a master
// renewed in time does not. Not parallel: it sets Now.
func TestCertsFailTheOutcome(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	old := Now
	Now = func() time.Time { return now }
	defer func() { Now = old }()
	master := func(certs, certsErr string) map[int]VM {
		return map[int]VM{7: {ID: 7, Name: "master", State: "ACTIVE", LCMState: "RUNNING", Phase: "done", Ready: true,
			CP: ControlPlaneInfo{Kind: "init", Certs: certs, CertsError: certsErr}}}
	}
	svc := Service{ID: 1, Name: "k", State: 2, Roles: []Role{{Name: "master", State: 2, Cardinality: 1, VMIDs: []int{7}}}}
	for _, tc := range []struct {
		name, certs, err string
		want             Outcome
		reason           string
	}{
		{"fresh", "expires=2027-11-29T12:00:00Z renewed=never", "", Ready, ""},
		{"renewal due, not near", "expires=2026-12-20T12:00:00Z renewed=never", "", Ready, ""},
		{"exactly a week", "expires=2026-12-06T12:00:00Z renewed=never", "", Ready, ""},
		{"within a week", "expires=2026-12-06T11:00:00Z renewed=2025-12-06T11:00:00Z", "", Failed,
			"VM 7 (master): certificates expire at 2026-12-06T11:00:00Z, in 167h0m0s, and are not renewed yet"},
		{"expired", "expires=2026-11-29T11:59:00Z renewed=never", "", Failed, "VM 7 (master): certificates expired at 2026-11-29T11:59:00Z"},
		{"renewal error, far expiry", "expires=2027-11-29T12:00:00Z renewed=never", "kubeadm certs renew all: exit status 1", Failed,
			"VM 7 (master) cannot renew its certificates: kubeadm certs renew all: exit status 1"},
		{"renewal error, nothing else published", "", "writing admin.conf: permission denied", Failed,
			"VM 7 (master) cannot renew its certificates: writing admin.conf: permission denied"},
		{"unreadable value", "expires=soon renewed=never", "", Ready, ""},
		{"older agent", "", "", Ready, ""},
	} {
		r := Summarize(svc, master(tc.certs, tc.err))
		if r.Outcome != tc.want {
			t.Errorf("%s: outcome %s, want %s (reasons %q)", tc.name, r.Outcome, tc.want, r.Reasons)
			continue
		}
		if tc.reason != "" && !strings.Contains(strings.Join(r.Reasons, "\n"), tc.reason) {
			t.Errorf("%s: reasons %q, want %q", tc.name, r.Reasons, tc.reason)
		}
	}
}

func TestCertsExpiry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want string // RFC 3339, "" for not ok
	}{
		{"expires=2027-01-20T00:00:00Z renewed=never", "2027-01-20T00:00:00Z"},
		{"expires=2027-01-20T01:00:00+01:00 renewed=2026-01-20T00:00:00Z", "2027-01-20T00:00:00Z"},
		{"expires=2027-01-20T00:00:00Z", "2027-01-20T00:00:00Z"},
		{"renewed=never expires=2027-01-20T00:00:00Z", ""},
		{"expires=", ""},
		{"expires=tomorrow renewed=never", ""},
		{"", ""},
		{"   ", ""},
	} {
		got, ok := certsExpiry(tc.in)
		s := ""
		if ok {
			s = got.Format(time.RFC3339)
		}
		if s != tc.want {
			t.Errorf("certsExpiry(%q) = %q, want %q", tc.in, s, tc.want)
		}
	}
}

// ONEGATE_K8S_CERTS is sibling-writable: any text parses without panic,
// and a time read is always UTC and printable in a reason.
func FuzzCertsExpiry(f *testing.F) {
	for _, s := range []string{"expires=2027-01-20T00:00:00Z renewed=never", "expires=9999-12-31T23:59:59+14:00", "expires=\x00", "", "expires=2027-01-20T00:00:00.999999999Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		exp, ok := certsExpiry(s)
		if !ok {
			return
		}
		if exp.Location() != time.UTC {
			t.Fatalf("%q: %v not UTC", s, exp)
		}
		rows := []Row{{Role: "master", VM: VM{ID: 1, CP: ControlPlaneInfo{Certs: s}}}}
		_ = certsReasons(rows, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	})
}
