package gate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/gate"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
)

const actorTemplate = `{"name":"k8s","deployment":"none","roles":[
 {"name":"master","type":"vm","template_id":1,"cardinality":1},
 {"name":"worker","type":"vm","template_id":2,"cardinality":2,"min_vms":0,"max_vms":4,"cooldown":0}]}`

func actorFor(t *testing.T, deny []string) (*onegatesim.Sim, int, gate.Actor) {
	t.Helper()
	sim := onegatesim.New(onegatesim.Options{Dir: t.TempDir(), Deny: deny})
	url, err := sim.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	sid, err := sim.Instantiate([]byte(actorTemplate), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := sim.RoleVMs(sid, "master")[0]
	a, err := gate.NewActor(gate.Config{Creds: vmcontext.Credentials{Endpoint: url, VMID: m.ID, Token: m.Token}})
	if err != nil {
		t.Fatal(err)
	}
	return sim, sid, a
}

// Refusals come back classified: OneFlow's scale refusal in WARNING, oned's
// action refusal, neither marked Retryable; a hardened server's 403.
func TestActorClassifiesRefusals(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sim, sid, a := actorFor(t, nil)
	w := sim.RoleVMs(sid, "worker")
	if err := a.Action(ctx, w[0].ID, "poweroff-hard", nil); err != nil {
		t.Fatal(err)
	}
	err := a.ScaleRole(ctx, "worker", 3)
	if !errors.Is(err, gate.ErrScaleRefused) || gate.IsRetryable(err) {
		t.Errorf("scale in WARNING = %v (retryable %t), want ErrScaleRefused", err, gate.IsRetryable(err))
	}
	if err := a.Action(ctx, w[0].ID, "resume", nil); err != nil {
		t.Fatal(err)
	}
	err = a.Action(ctx, w[0].ID, "resume", nil)
	if !errors.Is(err, gate.ErrActionRefused) || gate.IsRetryable(err) {
		t.Errorf("resume of a RUNNING VM = %v (retryable %t), want ErrActionRefused", err, gate.IsRetryable(err))
	}
	if err := a.ScaleRole(ctx, "worker", 3); err != nil {
		t.Errorf("scale once RUNNING again: %v", err)
	}

	_, sid2, hardened := actorFor(t, onegatesim.HardenedDeny())
	_ = sid2
	if err := hardened.Action(ctx, w[1].ID, "terminate", nil); !errors.Is(err, gate.ErrForbidden) {
		t.Errorf("action on a hardened server = %v, want ErrForbidden", err)
	}
	if err := hardened.ScaleRole(ctx, "worker", 3); !errors.Is(err, gate.ErrForbidden) {
		t.Errorf("scale on a hardened server = %v, want ErrForbidden", err)
	}
}
