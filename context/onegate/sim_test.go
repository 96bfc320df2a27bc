package onegate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
	"github.com/onekube/onekube/context/onegatesim"
)

// simTemplate is a master/worker service in the 7.x shape, or the 6.x one
// (vm_template) that 5.10 and 6.x servers require.
func simTemplate(version string) string {
	key := "template_id"
	if !strings.HasPrefix(version, "7.") {
		key = "vm_template"
	}
	return `{"name":"k8s","deployment":"straight","ready_status_gate":true,"roles":[
 {"name":"master","type":"vm","` + key + `":1,"cardinality":1},
 {"name":"worker","type":"vm","` + key + `":2,"cardinality":2,"parents":["master"],"cooldown":0}]}`
}

// simCluster starts a simulator for version and instantiates simTemplate.
func simCluster(t testing.TB, version string) (*onegatesim.Sim, int) {
	t.Helper()
	sim := onegatesim.New(onegatesim.Options{Dir: t.TempDir(), Version: version})
	if _, err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	id, err := sim.Instantiate([]byte(simTemplate(version)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return sim, id
}

// clientFor loads a simulated VM's context the way the agent does (explicit
// context file, token.txt beside it) and builds a client from it.
func clientFor(t testing.TB, v onegatesim.VMInfo) *onegate.Client {
	t.Helper()
	vc, err := vmcontext.Load(context.Background(), vmcontext.LoadOptions{
		ContextFile: v.ContextFile, Getenv: func(string) string { return "" },
	})
	if err != nil {
		t.Fatalf("loading VM %d context: %v", v.ID, err)
	}
	if vc.Creds.VMID != v.ID || vc.Creds.Token.Reveal() != v.Token.Reveal() {
		t.Fatalf("VM %d: loaded VMID %d, token matches: %v", v.ID, vc.Creds.VMID, vc.Creds.Token.Reveal() == v.Token.Reveal())
	}
	c, err := onegate.New(onegate.Config{Endpoint: vc.Creds.Endpoint, VMID: vc.Creds.VMID, Token: vc.Creds.Token, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAgainstSimulator(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"5.10", "6.10", "7.4"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			sim, sid := simCluster(t, version)
			masters := sim.RoleVMs(sid, "master")
			if len(masters) != 1 {
				t.Fatalf("masters = %+v", masters)
			}
			mc := clientFor(t, masters[0])

			me, err := mc.GetVM(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if me.ID != masters[0].ID || me.UserTemplate["ROLE_NAME"] != "master" {
				t.Errorf("GET /vm = %+v", me)
			}
			svc, err := mc.GetService(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if r := svc.Role("master"); svc.ID != sid || r == nil || len(r.Nodes) != 1 || r.Nodes[0].VMID != me.ID {
				t.Errorf("GET /service = %+v", svc)
			}

			// The master publishes in one update; the gate then releases the workers.
			err = mc.UpdateVM(ctx,
				onegate.KV{Key: vmcontext.KeyPubToken, Value: "abcdef.0123456789abcdef"},
				onegate.KV{Key: vmcontext.KeyPubHash, Value: "09a9ed140fec2fa1a2281a3125952d6f2951b67a67534647b0a606ae2d478f60"},
				onegate.KV{Key: vmcontext.KeyPubMaster, Value: masters[0].IP.String()},
				onegate.KV{Key: vmcontext.KeyPubPort, Value: "6443"},
				onegate.KV{Key: vmcontext.KeyReady, Value: "YES"})
			if err != nil {
				t.Fatal(err)
			}
			if ut := sim.UserTemplate(me.ID); ut[vmcontext.KeyPubToken] != "abcdef.0123456789abcdef" || ut[vmcontext.KeyReady] != "YES" {
				t.Errorf("user template after update = %v", ut)
			}
			if err := sim.WaitRoleVMs(ctx, sid, "worker", 2); err != nil {
				t.Fatal(err)
			}
			worker := sim.RoleVMs(sid, "worker")[0]
			wc := clientFor(t, worker)
			m, err := wc.GetVMByID(ctx, me.ID)
			if err != nil {
				t.Fatal(err)
			}
			if m.UserTemplate[vmcontext.KeyPubHash] != "09a9ed140fec2fa1a2281a3125952d6f2951b67a67534647b0a606ae2d478f60" {
				t.Errorf("worker sees master template %v", m.UserTemplate)
			}
			if _, err := wc.GetVMByID(ctx, 99999); err == nil || onegate.IsRetryable(err) {
				t.Errorf("foreign VM: error = %v, want a final error", err)
			}

			if err := wc.UpdateVM(ctx, onegate.KV{Key: vmcontext.KeyPubPhase, Value: "joining"}); err != nil {
				t.Fatal(err)
			}
			if got := sim.UserTemplate(worker.ID)[vmcontext.KeyPubPhase]; got != "joining" {
				t.Errorf("%s = %q after update", vmcontext.KeyPubPhase, got)
			}
			if err := wc.EraseVMKey(ctx, vmcontext.KeyPubPhase); err != nil {
				t.Fatalf("erase: %v", err)
			}
			if _, ok := sim.UserTemplate(worker.ID)[vmcontext.KeyPubPhase]; ok {
				t.Errorf("%s still set after erase", vmcontext.KeyPubPhase)
			}
			if err := wc.UpdateVM(ctx, onegate.KV{Key: vmcontext.KeyRoleName, Value: "master"}); err == nil {
				t.Error("changing ROLE_NAME was accepted")
			}

			// OneFlow scales only a RUNNING service: every worker reports first.
			for _, w := range sim.RoleVMs(sid, "worker") {
				if err := clientFor(t, w).UpdateVM(ctx, onegate.KV{Key: vmcontext.KeyReady, Value: "YES"}); err != nil {
					t.Fatal(err)
				}
			}
			if err := sim.WaitServiceRunning(ctx); err != nil {
				t.Fatal(err)
			}
			if err := mc.ScaleRole(ctx, "worker", 3); err != nil {
				t.Fatal(err)
			}
			if err := sim.WaitRoleVMs(ctx, sid, "worker", 3); err != nil {
				t.Fatal(err)
			}

			sim.SetWrongToken(worker.ID)
			if _, err := wc.GetVM(ctx); !onegate.IsUnauthorized(err) || onegate.IsRetryable(err) {
				t.Errorf("wrong token: error = %v, want 401", err)
			}
		})
	}
}

func TestExtendedAgainstSimulator(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sim, sid := simCluster(t, "7.4")
	master := sim.RoleVMs(sid, "master")[0]
	c := clientFor(t, master)
	if err := c.UpdateVM(ctx, onegate.KV{Key: "READY", Value: "YES"}); err != nil {
		t.Fatal(err)
	}
	short, err := c.GetService(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := short.Role("master").Nodes[0]; n.VM != nil {
		t.Errorf("short form carried a VM: %+v", n.VM)
	}
	ext, err := c.GetServiceExtended(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := ext.Role("master").Nodes[0]; n.VM == nil || n.VM.UserTemplate["READY"] != "YES" {
		t.Errorf("extended node = %+v", n)
	}
}

// The request cost against the simulator, which does what OneGate does per
// request (token check, template parse), on loopback.
func BenchmarkSimulatorGetVM(b *testing.B) {
	sim, sid := simCluster(b, "7.4")
	c := clientFor(b, sim.RoleVMs(sid, "master")[0])
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.GetVM(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSimulatorUpdateVM(b *testing.B) {
	sim, sid := simCluster(b, "7.4")
	c := clientFor(b, sim.RoleVMs(sid, "master")[0])
	ctx := context.Background()
	kvs := []onegate.KV{{Key: "ONEGATE_K8S_PHASE", Value: "init"}, {Key: "ONEGATE_K8S_NODE_NAME", Value: "master-0"}}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.UpdateVM(ctx, kvs...); err != nil {
			b.Fatal(err)
		}
	}
}
