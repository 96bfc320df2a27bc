package agent

import (
	"context"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// exposureProber is the production client's ProbeExposure
// (context/onegate/exposure.go). A OneGate without it (the tests' fakes)
// publishes no finding.
type exposureProber interface {
	ProbeExposure(ctx context.Context, roleName string) (onegate.Exposure, error)
}

// exposureTimeout bounds the probe: it must never hold back a publish.
const exposureTimeout = 10 * time.Second

// exposureKVs probes, on this VM's own template, what OneGate lets any VM
// of the service do (the restricted-attribute bypass, PUT /vms/:id), for
// ONEGATE_K8S_EXPOSURE. Masters run it once per bootstrap, inside their
// publish: the answer is the server's configuration, the same for every
// VM, so workers need not add to the start-up burst. A failed probe is
// published as unknown, never a failed bootstrap.
func exposureKVs(ctx context.Context, d Data) []onegate.KV {
	p, ok := d.OneGate().(exposureProber)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, exposureTimeout)
	defer cancel()
	// The value ROLE_NAME has now, whatever the agent makes of it: the
	// probe rewrites it unchanged.
	e, err := p.ProbeExposure(ctx, d.Node().Self.UserTemplate[vmcontext.KeyRoleName])
	if err != nil {
		d.Log().Warn("probing what OneGate lets a VM of the service do failed; publishing what is known", "exposure", e.String(), "error", err)
	} else if e.RestrictedBypass == onegate.Yes || e.UpdateByID == onegate.Yes {
		d.Log().Info("OneGate lets any VM of this service write its siblings' keys or its own ROLE_NAME and SERVICE_ID; see docs/trust.md", "exposure", e.String())
	}
	return []onegate.KV{{Key: vmcontext.KeyPubExposure, Value: e.String()}}
}
