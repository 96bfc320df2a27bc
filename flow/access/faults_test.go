package access

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	errs "github.com/OpenNebula/one/src/oca/go/src/goca/errors"
	"github.com/OpenNebula/one/src/oca/go/src/goca/schemas/vm"

	"github.com/onekube/onekube/context/kubeconfig"
	"github.com/onekube/onekube/flow/register"
)

// pollVMs accepts the request and then fails every read with err.
type pollVMs struct {
	err   error
	reads int
}

func (p *pollVMs) Info(context.Context, int) (*vm.VM, error) { p.reads++; return nil, p.err }
func (p *pollVMs) Merge(context.Context, int, string) error  { return nil }

// While it waits for the answer, Fetch retries a read that may pass (a
// network fault) until its deadline, and stops at the first one that
// will fail the same way again.
func TestFetchStopsOnLastingFaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		err     error
		lasting bool
	}{
		{"authentication", &errs.ResponseError{Code: errs.OneAuthenticationError, Msg: "User couldn't be authenticated"}, true},
		{"authorization", &errs.ResponseError{Code: errs.OneAuthorizationError, Msg: "Not authorized"}, true},
		{"VM gone", fmt.Errorf("oned: reading VM 49: %w", &errs.ResponseError{Code: errs.OneNoExistsError}), true},
		{"redirect", fmt.Errorf("oned: %w: a points to b", register.ErrRedirect), true},
		{"not oned's answer", fmt.Errorf("oned: %w", register.ErrBadAnswer), true},
		{"xml-rpc fault", &errs.ClientError{Code: errs.ClientRespXMLRPCFault, Msg: "server response"}, true},
		{"connection refused", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, false},
		{"a 502 from a proxy", &errs.ClientError{Code: errs.ClientRespHTTP, Msg: "bad gateway"}, false},
		{"one call's timeout", fmt.Errorf("oned: reading VM 49: %w", context.DeadlineExceeded), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := lasting(tc.err); got != tc.lasting {
				t.Errorf("lasting(%v) = %v", tc.err, got)
			}
			vms := &pollVMs{err: tc.err}
			c := &Client{VMs: vms, Sleep: func(ctx context.Context, _ time.Duration) error { time.Sleep(5 * time.Millisecond); return ctx.Err() }}
			// 2 s, not less: make test beside the real bed once left a
			// 200 ms deadline room for one read only.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			id := newAgeIdentity(t)
			_, err := c.Fetch(ctx, Target{Master: masterVM(t, nil), User: "alice", Role: kubeconfig.RoleClusterAdmin},
				Want{Identity: id, Role: kubeconfig.RoleClusterAdmin, TTL: time.Hour})
			if tc.lasting {
				if vms.reads != 1 || errors.Is(err, ErrNoAnswer) || !strings.Contains(err.Error(), "waiting for master VM 49") {
					t.Errorf("%d reads, err %v; want one read and the fault", vms.reads, err)
				}
			} else if vms.reads < 2 || !errors.Is(err, ErrNoAnswer) {
				t.Errorf("%d reads, err %v; want retries until the deadline", vms.reads, err)
			}
		})
	}
}
