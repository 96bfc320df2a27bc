package agent

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/onekube/onekube/agent/certgrant"
)

// presentRecipient serves this join attempt's recipient at this master's
// Kubernetes address while it waits for its grant: the acting master
// trusts what answers at an address oned gave this VM, not the recipient
// in USER_TEMPLATE, which any VM of the service can write
// (docs/trust.md). The returned stop ends the listener.
func presentRecipient(ctx context.Context, d Data, recipient string) (stop func(), err error) {
	at := net.JoinHostPort(d.Config().Address.String(), strconv.Itoa(certgrant.PresentPort))
	ln, err := d.Listen("tcp", at)
	if err != nil {
		return nil, fmt.Errorf("presenting this master's recipient at %s to the acting master: %w", at, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p := certgrant.Presentation{VMID: d.Node().VMID, Recipient: recipient}
		if err := certgrant.Serve(ctx, ln, p); err != nil {
			d.Log().Warn("presenting the recipient stopped; no grant can come", "address", at, "error", err)
		}
	}()
	d.Log().Info("presenting this master's recipient to the acting master", "address", at)
	return func() { cancel(); <-done }, nil
}
