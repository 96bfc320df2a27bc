package serve

import (
	"context"
	"fmt"

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/context/onegate"
)

// keyMirror keeps one key of this VM's USER_TEMPLATE equal to a value,
// erased when the value is empty: OneGate is written only on a change,
// and read once (GET /vm) to learn what is shown already.
type keyMirror struct {
	key   string
	known bool
	shown string
}

func (m *keyMirror) set(ctx context.Context, og gate.OneGate, want string) error {
	if !m.known {
		vm, err := og.GetVM(ctx)
		if err != nil {
			return err
		}
		m.shown, m.known = vm.UserTemplate[m.key], true
	}
	if want == m.shown {
		return nil
	}
	if want == "" {
		if err := gate.EraseKeys(ctx, og, m.key); err != nil {
			return err
		}
	} else if err := og.UpdateVM(ctx, onegate.KV{Key: m.key, Value: want}); err != nil {
		return fmt.Errorf("publishing %s: %w", m.key, err)
	}
	m.shown = want
	return nil
}
