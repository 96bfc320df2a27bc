package testbed

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/onekube/onekube/context/onegatesim"
)

// ServiceOptions.Context reaches every VM's CONTEXT even for a key that is
// also one of the service's user inputs (OneFlow writes the inputs' values
// into every role's CONTEXT, over the role's own: the bed answers the input
// as an owner would), and ServiceOptions.Cooldown is each role's cooldown.
func TestServiceTemplateContext(t *testing.T) {
	o := ServiceOptions{Workers: 1, Cooldown: 5 * time.Second,
		Context: map[string]string{"ONEAPP_K8S_AUTOSCALE": "1:3", "ONEKUBE_TEST_ONLY": "x"}}
	tmpl, merge, err := serviceTemplate(o)
	if err != nil {
		t.Fatal(err)
	}
	sim := onegatesim.New(onegatesim.Options{Dir: t.TempDir(), Listen: "127.0.0.1:0", Endpoint: "http://127.0.0.1:1"})
	if _, err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	id, err := sim.Instantiate(tmpl, merge)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range sim.RoleVMs(id, "master") {
		ctx := sim.Context(v.ID)
		for k, want := range o.Context {
			if ctx[k] != want {
				t.Errorf("VM %d: CONTEXT %s = %q, want %q", v.ID, k, ctx[k], want)
			}
		}
	}
	if got := roleCooldowns(t, tmpl); len(got) != 2 || got[0] != 5 || got[1] != 5 {
		t.Errorf("role cooldowns %v, want [5 5]", got)
	}
}

func roleCooldowns(t *testing.T, tmpl []byte) []float64 {
	t.Helper()
	var doc struct {
		Roles []struct {
			Cooldown float64 `json:"cooldown"`
		} `json:"roles"`
	}
	if err := json.Unmarshal(tmpl, &doc); err != nil {
		t.Fatal(err)
	}
	var out []float64
	for _, r := range doc.Roles {
		out = append(out, r.Cooldown)
	}
	return out
}
