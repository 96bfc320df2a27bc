package e2e

import (
	"testing"

	"github.com/onekube/onekube/agent/internal/simcluster"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
)

// TestHardenedOneGate: onekube needs none of what a hardened
// onegate-server.conf turns off (:update_by_id:, :action_by_id:,
// :change_cardinality: false): a 1 master + 2 worker service deploys with
// every VM READY, and the master publishes what its probe found. With the
// default conf the probe finds both doors open. Each VM's rename of itself
// to its node name (issue 22) is refused there (a warning), done here.
func TestHardenedOneGate(t *testing.T) {
	for _, c := range []struct {
		name     string
		deny     []string
		exposure string
		probes   int // the master's PUT /vms/:id answered 403
		renamed  bool
	}{
		{"hardened", onegatesim.HardenedDeny(), "restricted-bypass=yes update_by_id=no", 1, false},
		{"default", nil, "restricted-bypass=yes update_by_id=yes", 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := startCluster(t, simcluster.Options{Workers: 2, Deployment: "straight", Sim: onegatesim.Options{Deny: c.deny}})
			runs := wait(t, cl, 3)
			for _, r := range runs {
				if r.Code != 0 || r.Err != nil {
					dump(t, runs)
					t.Fatalf("VM %d exited %d (%v)", r.VM.ID, r.Code, r.Err)
				}
			}
			vms := cl.Sim.VMs()
			if len(vms) != 3 {
				t.Fatalf("%d VMs, want 3", len(vms))
			}
			for _, vm := range vms {
				ut := cl.Sim.UserTemplate(vm.ID)
				if ut[vmcontext.KeyReady] != "YES" {
					t.Errorf("VM %d (%s) not READY: %v", vm.ID, vm.Role, ut)
				}
				st := cl.Sim.Stats(vm.ID)
				want403, exposure := 0, ""
				if vm.Role == "master" {
					want403, exposure = c.probes, c.exposure
					if n := st.Requests[onegatesim.RoutePutVMByID]; n != 1 {
						t.Errorf("master sent PUT /vms/:id %d times, want the one probe", n)
					}
				} else if n := st.Requests[onegatesim.RoutePutVMByID]; n != 0 {
					t.Errorf("worker %d sent PUT /vms/:id %d times", vm.ID, n)
				}
				if n := st.Requests[onegatesim.RouteVMAction]; n != 1 {
					t.Errorf("VM %d (%s) sent POST /vms/:id/action %d times, want its one rename", vm.ID, vm.Role, n)
				}
				if !c.renamed {
					want403++ // the rename
				}
				if renamed := vm.Name == ut[vmcontext.KeyPubNodeName]; renamed != c.renamed {
					t.Errorf("VM %d (%s) is named %q, node %q", vm.ID, vm.Role, vm.Name, ut[vmcontext.KeyPubNodeName])
				}
				if st.Status[403] != want403 {
					t.Errorf("VM %d (%s): %d answers 403, want %d (%v)", vm.ID, vm.Role, st.Status[403], want403, st.Requests)
				}
				if got := ut[vmcontext.KeyPubExposure]; got != exposure {
					t.Errorf("VM %d (%s): %s = %q, want %q", vm.ID, vm.Role, vmcontext.KeyPubExposure, got, exposure)
				}
				if ut[vmcontext.KeyRoleName] != vm.Role || ut[vmcontext.KeyServiceID] != "1" {
					t.Errorf("VM %d: ROLE_NAME %q SERVICE_ID %q after the probe", vm.ID, ut[vmcontext.KeyRoleName], ut[vmcontext.KeyServiceID])
				}
			}
			assertNoSecrets(t, cl, runs)
		})
	}
}
