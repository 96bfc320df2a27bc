package flow

import (
	"errors"
	"fmt"
	"math"
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
		{name: "two documents", doc: head + "---\n" + head, wantErr: "the file holds more than one YAML document (document 2 starts after a ---): one cluster spec per file"},
		{name: "empty first document", doc: "---\n---\n" + head, wantErr: "more than one YAML document"},
		{name: "trailing separator", doc: "---\n" + head + "---\n# nothing\n", check: func(*testing.T, Spec) {}},
		{name: "end marker", doc: head + "...\n", check: func(*testing.T, Spec) {}},
		{name: "too big", doc: head + "# " + strings.Repeat("x", MaxSpecSize), wantErr: "bytes: a spec file has at most 1048576"},
		{name: "count overflows int64", doc: head + "worker:\n  count: 9223372036854775808\n", wantErr: "worker.count"},
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
		{"version is the image's", func(s *Spec) { s.Kubernetes.Version = "v1.31.2" }, `error kubernetes.version: "v1.31.2": the appliance image carries one Kubernetes release`},
		{"port", func(s *Spec) { s.Kubernetes.Port = 70000 }, "error kubernetes.port"},
		{"cni", func(s *Spec) { s.Kubernetes.CNI = "weave" }, "error kubernetes.cni"},
		{"ttl", func(s *Spec) { s.Kubernetes.TokenTTL = "1 day" }, "error kubernetes.tokenTTL"},
		{"pods cidr", func(s *Spec) { s.Kubernetes.PodsNetwork = "10.244.0.0" }, "error kubernetes.podsNetwork"},
		{"overlap", func(s *Spec) { s.Kubernetes.ServicesNetwork = "10.244.0.0/24" }, "error kubernetes.servicesNetwork: service network 10.244.0.0/24 overlaps pod network"},
		{"node overlap", func(s *Spec) { s.Network.CIDR = "10.96.0.0/24" }, "error network.cidr: node network"},
		{"address ip", func(s *Spec) { s.Kubernetes.Address = "192.168.1.10" }, `error kubernetes.address: ONEAPP_K8S_ADDRESS: "192.168.1.10" is one IP address, which cannot be every VM's: give the network as a CIDR, e.g. 192.168.1.0/24`},
		{"address ipv6", func(s *Spec) { s.Kubernetes.Address = "fd00::5" }, "e.g. fd00::/64"},
		{"address cidr", func(s *Spec) { s.Kubernetes.Address = "192.168.1.0/24" }, ""},
		{"address ipv6 cidr", func(s *Spec) { s.Kubernetes.Address = "fd00:1::/64" }, ""},
		{"address host bits", func(s *Spec) { s.Kubernetes.Address = "192.168.1.7/24" }, "error kubernetes.address: ONEAPP_K8S_ADDRESS: \"192.168.1.7/24\" has host bits set (did you mean 192.168.1.0/24?)"},
		{"address in services", func(s *Spec) { s.Kubernetes.Address = "10.96.0.0/24" }, "error kubernetes.address: ONEAPP_K8S_ADDRESS: the nodes' range 10.96.0.0/24 overlaps the service network 10.96.0.0/12"},
		{"address network", func(s *Spec) { s.Kubernetes.Address = "k8s net (vlan 12)" }, ""},
		{"address bad name", func(s *Spec) { s.Kubernetes.Address = "a|b" }, `error kubernetes.address: ONEAPP_K8S_ADDRESS: "a|b" is neither a CIDR (e.g. 10.0.0.0/24) nor a virtual network name: OpenNebula names cannot contain "|"`},
		{"address bad cidr", func(s *Spec) { s.Kubernetes.Address = "10.0.0.0/33" }, `error kubernetes.address: ONEAPP_K8S_ADDRESS: "10.0.0.0/33" is neither a CIDR`},
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

// TestSpecLimits: every count and size has an upper bound, reported at its
// field's path.
func TestSpecLimits(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(*Spec)
		want string
	}{
		{"max int workers", func(s *Spec) { s.Worker.Count = ptr(math.MaxInt64) }, "error worker.count: 9223372036854775807 VMs is above the limit of 5000 VMs"},
		{"workers at the limit", func(s *Spec) { s.Worker.Count = ptr(MaxNodes - 1) }, ""},
		{"worker max", func(s *Spec) { s.Worker.Max = ptr(MaxNodes + 1) }, "error worker.max: 5001 VMs is above the limit of 5000 VMs"},
		{"worker min", func(s *Spec) { s.Worker.Min = ptr(MaxNodes + 1) }, "error worker.min: 5001 VMs is above the limit"},
		{"nodes in all", func(s *Spec) { s.Worker.Max = ptr(MaxNodes) }, "error worker.max: masters and workers may reach 5001 VMs, above the 5000 nodes Kubernetes supports"},
		{"masters", func(s *Spec) { s.Master.Count = ptr(9) }, "error master.count: 9 VMs is above the limit of 7 VMs"},
		{"memory", func(s *Spec) { s.Worker.MemoryMB = 10_000_000_000_000 }, "error worker.memoryMB: 10000000000000 MB is above the limit of 16777216 MB"},
		{"memory at the limit", func(s *Spec) { s.Worker.MemoryMB = MaxMemoryMB }, ""},
		{"cpu", func(s *Spec) { s.Master.CPU = 1e300 }, "error master.cpu: 1e+300 is above the limit of 1024"},
		{"vcpu", func(s *Spec) { s.Master.VCPU = 4096 }, "error master.vcpu: 4096 is above the limit of 1024"},
		{"disk", func(s *Spec) { s.Worker.Disk.SizeMB = math.MaxInt32 * 16 }, "error worker.disk.sizeMB"},
		{"template id", func(s *Spec) { s.Worker.TemplateID = ptr(math.MaxInt32 + 1) }, "error worker.templateID: 2147483648 is above the limit of 2147483647"},
		{"image id", func(s *Spec) { s.Worker.Disk.Image, s.Worker.Disk.ImageID = "", ptr(math.MaxInt32+1) }, "error worker.disk.imageID"},
		{"network id", func(s *Spec) { s.Network.ID = ptr(math.MaxInt32 + 1) }, "error network.id"},
		{"cooldown", func(s *Spec) { s.Worker.Cooldown = ptr(MaxSeconds + 1) }, "error worker.cooldown: 604801 s is above the limit of 604800 s"},
		{"policies", func(s *Spec) {
			s.Worker.ElasticityPolicies = make([]ElasticityPolicy, MaxPolicies+1)
			for i := range s.Worker.ElasticityPolicies {
				s.Worker.ElasticityPolicies[i] = ElasticityPolicy{Type: "CHANGE", Adjust: 1, Expression: "CPU > 80"}
			}
		}, "error worker.elasticityPolicies: 33 policies: at most 32"},
		{"adjust", func(s *Spec) {
			s.Worker.ElasticityPolicies = []ElasticityPolicy{{Type: "CHANGE", Adjust: -MaxNodes - 1, Expression: "CPU > 80", Period: ptr(MaxSeconds + 1), PeriodNumber: ptr(MaxPeriodNumber + 1)}}
		}, "error worker.elasticityPolicies[0].adjust: -5001 is beyond ±5000"},
		{"period", func(s *Spec) {
			s.Worker.ElasticityPolicies = []ElasticityPolicy{{Type: "CHANGE", Adjust: 1, Expression: "CPU > 80", Period: ptr(MaxSeconds + 1)}}
		}, "error worker.elasticityPolicies[0].period: 604801 is above the limit of 604800"},
		{"scheduled step", func(s *Spec) {
			s.Worker.ScheduledPolicies = []ScheduledPolicy{{Type: "CARDINALITY", Adjust: 3, MinAdjustStep: ptr(MaxNodes + 1), Recurrence: "0 8 * * *"}}
		}, "error worker.scheduledPolicies[0].minAdjustStep"},
		{"inputs", func(s *Spec) {
			for i := range MaxUserInputs + 1 {
				s.UserInputs = append(s.UserInputs, UserInput{Name: fmt.Sprintf("IN_%d", i), Type: "text"})
			}
		}, "error userInputs: 101 inputs: at most 100"},
		{"input text", func(s *Spec) {
			s.UserInputs = []UserInput{{Name: "X", Type: "text", Default: strings.Repeat("a", MaxText+1)}}
		}, "error userInputs[0].default: 1025 characters"},
		{"description", func(s *Spec) { s.Metadata.Description = strings.Repeat("d", MaxText+1) }, "error metadata.description: 1025 characters"},
		{"token ttl", func(s *Spec) { s.Kubernetes.TokenTTL = "9000h" }, "error kubernetes.tokenTTL: 9000h0m0s is outside 15m to 24h"},
		{"token ttl short", func(s *Spec) { s.Kubernetes.TokenTTL = "10m" }, "error kubernetes.tokenTTL: 10m0s is outside 15m to 24h"},
		{"name chars", func(s *Spec) { s.Metadata.Name = "a/b" }, `error metadata.name: "a/b": OpenNebula names cannot contain "/"`},
		{"name length", func(s *Spec) { s.Metadata.Name = strings.Repeat("k", 125) }, "error metadata.name: the master VM template name"},
		{"template name", func(s *Spec) { s.Worker.TemplateName = "w<1>" }, `error worker.templateName: the worker VM template name "w<1>": OpenNebula names cannot contain "<"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSpec()
			tc.edit(&s)
			var lines []string
			for _, p := range CheckSpec(s) {
				lines = append(lines, p.String())
			}
			all := strings.Join(lines, "\n")
			if tc.want == "" {
				if HasErrors(CheckSpec(s)) {
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
