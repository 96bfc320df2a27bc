package agent

import (
	"context"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

// OneFlow creates a role's VMs in one call, so hundreds of workers boot in
// the same seconds and would all read OneGate at once (1.3-1.5 k requests
// a second for 500 of them, measured for issue 14). A worker therefore
// waits a fixed share of StartSpread, by VM ID, before its first request:
// k start-up requests each over a window of W seconds is kN/W a second,
// so a window of twice the requests keeps it at N/2 whatever N is. Masters
// never wait: their kubeadm init is on every worker's critical path.

// contextWorker reports whether the context names this VM's role and it is
// not the master role. ROLE_NAME in CONTEXT is "$ROLE_NAME", which oned
// resolves from the attribute OneFlow adds (flow/vmtemplate.go); a VM
// without it (a template made by hand) is taken for a master: no wait.
func contextWorker(v vmcontext.Vars) bool {
	role := v.Get(vmcontext.KeyRoleName)
	master := v.Get(vmcontext.KeyMasterRole)
	if master == "" {
		master = vmcontext.DefaultMasterRole
	}
	return role != "" && role != master
}

// startWindow is the start-up window: a worker that knows its master's VM
// makes three requests before its join (GET /vm, GET /vms/:id, and
// GET /service to confirm that VM is in the master role: hint.go), not
// four, and needs three quarters of the window for the same load; in a
// straight deployment every second of it is on the time to ready. One
// without the hint also renames its VM in the window (identity.go): five
// requests, five quarters of it, while its master initialises.
func startWindow(spread time.Duration, hinted bool) time.Duration {
	if hinted {
		return spread * 3 / 4
	}
	return spread * 5 / 4
}

// spreadStart sleeps this VM's share of the start-up window.
func spreadStart(ctx context.Context, d *bootData, window time.Duration) error {
	wait := spreadOffset(d.self, window)
	if wait <= 0 {
		return nil
	}
	d.log.Debug("spreading the first OneGate request", "wait", wait.Round(time.Millisecond), "window", window)
	return d.clock.Sleep(ctx, wait)
}
