package access

import (
	"crypto/x509"
	"errors"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/kubeconfig"
)

// A sibling can rewrite a pending request (it lives in the master's
// USER_TEMPLATE), so the CLI compares the certificate it gets with what it
// asked for: the lifetime within a clock-skew tolerance, and the role's
// group and nothing else.
func TestCLIRefusesWrongLifetimeOrRole(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	sent := time.Now()
	req := kubeconfig.Request{Name: "alice", Role: kubeconfig.RoleView, TTL: time.Hour}
	viewGroup := []string{kubeconfig.Group("alice", kubeconfig.RoleView)}
	adminGroup := []string{kubeconfig.Group("alice", kubeconfig.RoleClusterAdmin)}
	payload := func(orgs []string, notBefore, notAfter time.Time) kubeconfig.Payload {
		c, k := ca.leaf(t, "alice", orgs, func(c *x509.Certificate) { c.NotBefore, c.NotAfter = notBefore, notAfter })
		cert, _ := parseCert(c)
		return kubeconfig.Payload{ID: "REQ0000001", User: "alice", Role: kubeconfig.RoleView, CAPEM: ca.pem, CertPEM: c,
			Key: vmcontext.NewSecret(k), NotAfter: cert.NotAfter}
	}
	asIssued := sent.Add(-5 * time.Minute)
	for _, tc := range []struct {
		name string
		p    kubeconfig.Payload
		want error
	}{
		{"as a master issues it", payload(viewGroup, asIssued, sent.Add(time.Hour)), nil},
		{"master clock 3 minutes ahead", payload(viewGroup, asIssued.Add(3*time.Minute), sent.Add(time.Hour+3*time.Minute)), nil},
		{"a week instead of an hour", payload(viewGroup, asIssued, sent.Add(7*24*time.Hour)), ErrMismatch},
		{"two hours instead of one", payload(viewGroup, asIssued, sent.Add(2*time.Hour)), ErrMismatch},
		{"ten minutes instead of an hour", payload(viewGroup, asIssued, sent.Add(10*time.Minute)), ErrMismatch},
		{"started a month ago", payload(viewGroup, sent.Add(-30*24*time.Hour), sent.Add(time.Hour)), ErrMismatch},
		{"admin group for a view request", payload(adminGroup, asIssued, sent.Add(time.Hour)), ErrMismatch},
		{"both groups", payload(append(viewGroup, adminGroup...), asIssued, sent.Add(time.Hour)), ErrMismatch},
	} {
		_, err := CheckPayload(tc.p, "REQ0000001", req, sent, time.Now())
		if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
	}
}
