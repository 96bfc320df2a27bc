package flow

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	t.Parallel()
	head := "apiVersion: onekube.io/v1alpha1\nkind: Cluster\n"
	cases := []struct {
		name, doc, wantErr string
		check              func(t *testing.T, s Spec)
	}{
		{name: "minimal", doc: head, check: func(t *testing.T, s Spec) {
			d := DefaultSpec()
			if s.Metadata.Name != d.Metadata.Name || *s.Worker.Count != 2 || s.Kubernetes.CNI != "flannel" {
				t.Errorf("defaults not applied: %+v", s)
			}
		}},
		{name: "json", doc: `{"apiVersion":"onekube.io/v1alpha1","kind":"Cluster","worker":{"count":0}}`, check: func(t *testing.T, s Spec) {
			if *s.Worker.Count != 0 || s.TaintedMaster() {
				t.Errorf("0 workers: count %d tainted %v", *s.Worker.Count, s.TaintedMaster())
			}
		}},
		{name: "template id zero is kept", doc: head + "master:\n  templateID: 0\n", check: func(t *testing.T, s Spec) {
			if s.Master.TemplateID == nil || *s.Master.TemplateID != 0 {
				t.Errorf("templateID %v", s.Master.TemplateID)
			}
		}},
		{name: "empty", doc: "", wantErr: "empty"},
		{name: "not a mapping", doc: "- a\n", wantErr: "not a mapping"},
		{name: "no apiVersion", doc: "kind: Cluster\n", wantErr: "apiVersion is missing"},
		{name: "other apiVersion", doc: "apiVersion: onekube.io/v2\nkind: Cluster\n", wantErr: `apiVersion "onekube.io/v2" is not supported`},
		{name: "kind", doc: "apiVersion: onekube.io/v1alpha1\nkind: Service\n", wantErr: `kind "Service"`},
		{name: "unknown field", doc: head + "worker:\n  cpus: 2\n", wantErr: "unknown field worker.cpus"},
		{name: "unknown nested in list", doc: head + "worker:\n  elasticityPolicies:\n  - type: CHANGE\n    adjst: 1\n", wantErr: "unknown field worker.elasticityPolicies[0].adjst"},
		{name: "unknown top", doc: head + "spec: {}\n", wantErr: "unknown field spec"},
		{name: "duplicate key", doc: head + "worker:\n  count: 1\n  count: 2\n", wantErr: `key "count" already set`},
		{name: "wrong type", doc: head + "worker:\n  count: many\n", wantErr: "worker.count: got string, want an integer"},
		{name: "bad yaml", doc: head + "worker: [\n", wantErr: "invalid cluster spec"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSpec([]byte(tc.doc))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrSpec) {
					t.Fatalf("err = %v, want ErrSpec containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, s)
		})
	}
}

// TestSpecRoundTrip: MarshalSpec output parses back to the same spec.
func TestSpecRoundTrip(t *testing.T) {
	t.Parallel()
	for name, s := range testSpecs(t) {
		b, err := MarshalSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseSpec(b)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b)
		}
		a, _ := RenderService(s, Version7)
		c, _ := RenderService(back, Version7)
		if string(a) != string(c) {
			t.Errorf("%s: round trip changed the rendering", name)
		}
	}
}

func TestCheckSpec(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(s *Spec)
		want string // "" = no errors
	}{
		{"default", func(s *Spec) {}, ""},
		{"three masters", func(s *Spec) { s.Master.Count = ptr(3) }, ""},
		{"even masters", func(s *Spec) { s.Master.Count = ptr(2) }, "error master.count: 2 masters"},
		{"no masters", func(s *Spec) { s.Master.Count = ptr(0) }, "error master.count: 0 masters"},
		{"workers above default max", func(s *Spec) { s.Worker.Count = ptr(40) }, ""},
		{"workers above max", func(s *Spec) { s.Worker.Count = ptr(40); s.Worker.Max = ptr(20) }, "error worker.max: max 20 is below the count 40"},
		{"min above count", func(s *Spec) { s.Worker.Min = ptr(3) }, "error worker.min: min 3 is above the count 2"},
		{"negative count", func(s *Spec) { s.Worker.Count = ptr(-1) }, "error worker.count"},
		{"template id", func(s *Spec) { s.Worker.TemplateID = ptr(-4) }, "error worker.templateID"},
		{"cpu", func(s *Spec) { s.Worker.CPU = -1 }, "error worker.cpu"},
		{"small master", func(s *Spec) { s.Master.MemoryMB = 1536 }, "warning master.memoryMB"},
		{"disk both", func(s *Spec) { s.Worker.Disk.ImageID = ptr(3) }, "error worker.disk: set image or imageID"},
		{"version", func(s *Spec) { s.Kubernetes.Version = "latest" }, "error kubernetes.version"},
		{"version ok", func(s *Spec) { s.Kubernetes.Version = "v1.31.2" }, ""},
		{"version without patch", func(s *Spec) { s.Kubernetes.Version = "1.31" }, "error kubernetes.version"},
		{"port", func(s *Spec) { s.Kubernetes.Port = 70000 }, "error kubernetes.port"},
		{"cni", func(s *Spec) { s.Kubernetes.CNI = "weave" }, "error kubernetes.cni"},
		{"ttl", func(s *Spec) { s.Kubernetes.TokenTTL = "1 day" }, "error kubernetes.tokenTTL"},
		{"pods cidr", func(s *Spec) { s.Kubernetes.PodsNetwork = "10.244.0.0" }, "error kubernetes.podsNetwork"},
		{"overlap", func(s *Spec) { s.Kubernetes.ServicesNetwork = "10.244.0.0/24" }, "error kubernetes.servicesNetwork: service network 10.244.0.0/24 overlaps pod network"},
		{"node overlap", func(s *Spec) { s.Network.CIDR = "10.96.0.0/24" }, "error network.cidr: node network"},
		{"address", func(s *Spec) { s.Kubernetes.Address = "10.96.0.10" }, "error kubernetes.address"},
		{"network name", func(s *Spec) { s.Network.Name = "my-net" }, "error network.name"},
		{"network id", func(s *Spec) { s.Network.ID = ptr(-2) }, "error network.id"},
		{"deployment", func(s *Spec) { s.Service.Deployment = "parallel" }, "error service.deployment"},
		{"gate", func(s *Spec) { s.Service.ReadyStatusGate = ptr(false) }, "warning service.readyStatusGate"},
		{"shutdown", func(s *Spec) { s.Worker.ShutdownAction = "halt" }, "error worker.shutdownAction"},
		{"expression", func(s *Spec) {
			s.Worker.ElasticityPolicies = []ElasticityPolicy{{Type: "CHANGE", Adjust: 1, Expression: "CPU >"}}
		}, "error worker.elasticityPolicies[0].expression"},
		{"policy type", func(s *Spec) {
			s.Worker.ElasticityPolicies = []ElasticityPolicy{{Type: "UP", Adjust: 1, Expression: "CPU > 1"}}
		}, "error worker.elasticityPolicies[0].type"},
		{"scheduled", func(s *Spec) {
			s.Worker.ScheduledPolicies = []ScheduledPolicy{{Type: "CHANGE", Adjust: 1}}
		}, "error worker.scheduledPolicies[0]: set exactly one"},
		{"cron", func(s *Spec) {
			s.Worker.ScheduledPolicies = []ScheduledPolicy{{Type: "CHANGE", Adjust: 1, Recurrence: "* * *"}}
		}, "error worker.scheduledPolicies[0].recurrence"},
		{"input builtin", func(s *Spec) { s.UserInputs = []UserInput{{Name: "ONEAPP_K8S_PORT", Type: "number"}} }, "error userInputs[0].name"},
		{"input dup", func(s *Spec) {
			s.UserInputs = []UserInput{{Name: "A", Type: "text"}, {Name: "A", Type: "text"}}
		}, "error userInputs[1].name"},
		{"input network", func(s *Spec) { s.UserInputs = []UserInput{{Name: "Private", Type: "text"}} }, "error userInputs[0].name"},
		{"input pipe", func(s *Spec) { s.UserInputs = []UserInput{{Name: "A", Type: "text", Description: "a|b"}} }, "error userInputs[0]"},
		{"input lower", func(s *Spec) { s.UserInputs = []UserInput{{Name: "a", Type: "text"}} }, "warning userInputs[0]"},
		{"address pipe", func(s *Spec) { s.Kubernetes.Address = "a|b" }, "error kubernetes: the default of ONEAPP_K8S_ADDRESS"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSpec()
			tc.edit(&s)
			ps := CheckSpec(s)
			var lines []string
			for _, p := range ps {
				lines = append(lines, p.String())
			}
			all := strings.Join(lines, "\n")
			if tc.want == "" {
				if HasErrors(ps) {
					t.Errorf("unexpected errors:\n%s", all)
				}
				return
			}
			if !strings.Contains(all, tc.want) {
				t.Errorf("want %q in:\n%s", tc.want, all)
			}
		})
	}
}

func FuzzParseSpec(f *testing.F) {
	f.Add([]byte("apiVersion: onekube.io/v1alpha1\nkind: Cluster\n"))
	f.Add([]byte("apiVersion: onekube.io/v1alpha1\nkind: Cluster\nworker: {count: 3, max: 2}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSpec(data)
		if err != nil {
			return
		}
		// A parsed spec either renders or is refused with ErrSpec.
		for _, v := range []OneFlowVersion{Version6, Version7} {
			doc, err := RenderService(s, v)
			if err != nil {
				if !errors.Is(err, ErrSpec) {
					t.Fatalf("render: %v", err)
				}
				return
			}
			if ps := Validate(doc, ValidateOptions{Version: v}); HasErrors(ps) {
				t.Fatalf("a spec that passed CheckSpec renders an invalid %v template: %v", v, ps)
			}
		}
		if _, err := RenderVMTemplate(s, RoleWorker); err != nil {
			t.Fatalf("vm template: %v", err)
		}
	})
}
