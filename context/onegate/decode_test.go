package onegate_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/onekube/onekube/context/onegate"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDecodeVM(t *testing.T) {
	t.Parallel()
	vm, err := onegate.DecodeVM(readTestdata(t, "vm-7.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := &onegate.VM{
		ID: 49, Name: "master_0_(service_21)", State: 3, LCMState: 3,
		UserTemplate: map[string]string{
			"ONEGATE_K8S_MASTER": "172.20.0.100", "ONEGATE_K8S_TOKEN": "sg7711.p19vy0eqxefc0lqz",
			"ONEGATE_K8S_HASH": "09a9ed140fec2fa1a2281a3125952d6f2951b67a67534647b0a606ae2d478f60",
			"READY":            "YES", "ROLE_NAME": "master", "SERVICE_ID": "21",
		},
		NICs: []onegate.NIC{{Name: "_NIC0", IP: "172.20.0.100", MAC: "02:00:ac:14:00:64", Network: "service"}},
	}
	if !reflect.DeepEqual(vm, want) {
		t.Errorf("DecodeVM =\n%+v\nwant\n%+v", vm, want)
	}
}

func TestDecodeVMShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want onegate.VM
	}{
		{"numbers instead of strings", `{"VM":{"ID":7,"STATE":3,"LCM_STATE":3.0,"USER_TEMPLATE":{"N":5,"B":true}}}`,
			onegate.VM{ID: 7, State: 3, LCMState: 3, UserTemplate: map[string]string{"N": "5", "B": "true"}}},
		{"single NIC object and alias", `{"VM":{"ID":"1","TEMPLATE":{"NIC":{"IP":"10.0.0.1","IP6_SITE":"fd00::1"},"NIC_ALIAS":{"IP":"10.0.0.2"}}}}`,
			onegate.VM{ID: 1, State: -1, LCMState: -1, UserTemplate: map[string]string{},
				NICs: []onegate.NIC{{IP: "10.0.0.1", IP6ULA: "fd00::1"}, {IP: "10.0.0.2", Alias: true}}}},
		{"vectors and nulls left out", `{"VM":{"ID":" 2 ","USER_TEMPLATE":{"V":{"A":"1"},"L":["x","y"],"Z":null,"S":""}}}`,
			onegate.VM{ID: 2, State: -1, LCMState: -1, UserTemplate: map[string]string{"S": ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := onegate.DecodeVM([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("DecodeVM = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, msg string
		service       bool
	}{
		{"not JSON", `Not authorized`, "decoding VM", false},
		{"array", `[]`, "decoding VM", false},
		{"null", `null`, "not a JSON object", false},
		{"no VM", `{"vm":{}}`, "no VM object", false},
		{"no ID", `{"VM":{"NAME":"x"}}`, "VM.ID: missing", false},
		{"bad ID", `{"VM":{"ID":"secret-49"}}`, "VM.ID: not an integer", false},
		{"fractional state", `{"VM":{"ID":"1","STATE":"3.5"}}`, "VM.STATE: not an integer", false},
		{"trailing data", `{"VM":{"ID":"1"}} {}`, "trailing data", false},
		{"no SERVICE", `{"VM":{}}`, "no SERVICE object", true},
		{"service id missing", `{"SERVICE":{"roles":[]}}`, "SERVICE.id: missing", true},
		{"role without name", `{"SERVICE":{"id":1,"roles":[{"cardinality":1}]}}`, "SERVICE.roles[0].name: missing", true},
		{"node without id", `{"SERVICE":{"id":1,"roles":[{"name":"m","nodes":[{"running":null}]}]}}`, "SERVICE.roles[0].nodes[0]: no VM ID", true},
		{"bad cardinality", `{"SERVICE":{"id":1,"roles":[{"name":"m","cardinality":"many"}]}}`, "SERVICE.roles[0].cardinality: not an integer", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var err error
			if tt.service {
				_, err = onegate.DecodeService([]byte(tt.in))
			} else {
				_, err = onegate.DecodeVM([]byte(tt.in))
			}
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error = %v, want %q", err, tt.msg)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q echoes a value", err)
			}
		})
	}
}

func TestDecodeService(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want *onegate.Service
	}{
		{"service-7.json", &onegate.Service{ID: 21, Name: "asd", State: 2, Roles: []onegate.Role{
			{Name: "master", Cardinality: 1, State: 2, Nodes: []onegate.Node{{VMID: 49}}},
			{Name: "worker", Cardinality: 2, State: 1, Nodes: []onegate.Node{{VMID: 50}, {VMID: 51}}},
			{Name: "storage"},
		}}},
		{"service-5.json", &onegate.Service{ID: 7, Name: "k8s", State: 2, Roles: []onegate.Role{
			{Name: "master", Cardinality: 1, State: 2, Nodes: []onegate.Node{{VMID: 12, VM: &onegate.VM{
				ID: 12, Name: "master_0_(service_7)", State: 3, LCMState: 3,
				UserTemplate: map[string]string{"READY": "YES", "ROLE_NAME": "master", "SERVICE_ID": "7", "ONEGATE_K8S_TOKEN": "abcdef.0123456789abcdef"},
				NICs:         []onegate.NIC{{IP: "10.0.0.12", MAC: "02:00:0a:00:00:0c", Network: "private"}},
			}}}},
			{Name: "worker", Cardinality: 1, State: 1, Nodes: []onegate.Node{{VMID: 13, VM: &onegate.VM{
				ID: 13, Name: "worker_0_(service_7)", State: 3, LCMState: 2, UserTemplate: map[string]string{},
			}}}},
		}}},
		{"service-extended.json", &onegate.Service{ID: 21, Name: "asd", State: 2, Roles: []onegate.Role{
			{Name: "master", Cardinality: 1, State: 2, Nodes: []onegate.Node{{VMID: 49, VM: &onegate.VM{
				ID: 49, Name: "master_0_(service_21)", State: 3, LCMState: 3, STime: 1700000000,
				UserTemplate: map[string]string{"READY": "YES", "ROLE_NAME": "master", "SERVICE_ID": "21"},
				NICs:         []onegate.NIC{{Name: "NIC0", IP: "172.20.0.100", IP6: "2001:db8::64", MAC: "02:00:ac:14:00:64", Network: "service"}},
				Context:      map[string]string{"NETWORK": "YES", "TOKEN": "YES", "ETH0_IP": "172.20.0.100"},
			}}}},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			got, err := onegate.DecodeService(readTestdata(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DecodeService =\n%+v\nwant\n%+v", got, tt.want)
			}
			if r := got.Role("master"); r == nil || r.Nodes[0].VMID != tt.want.Roles[0].Nodes[0].VMID {
				t.Errorf("Role(master) = %+v", r)
			}
		})
	}
}

func FuzzDecodeVM(f *testing.F) {
	f.Add(readTestdata(f, "vm-7.json"))
	f.Add([]byte(`{"VM":{"ID":7,"TEMPLATE":{"NIC":{"IP":"1"}}}}`))
	f.Add([]byte(`{"VM":{"ID":"1e3","STATE":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		vm, err := onegate.DecodeVM(data)
		if err != nil {
			return
		}
		if vm.UserTemplate == nil {
			t.Fatal("nil UserTemplate on success")
		}
		again, err := onegate.DecodeVM(data)
		if err != nil || !reflect.DeepEqual(vm, again) {
			t.Fatal("decoding is not deterministic")
		}
	})
}

func FuzzDecodeService(f *testing.F) {
	for _, name := range []string{"service-7.json", "service-5.json", "service-extended.json"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte(`{"SERVICE":{"id":1,"roles":{"name":"m","nodes":{"deploy_id":-1,"vm_info":{"VM":{"ID":"3"}}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := onegate.DecodeService(data)
		if err != nil {
			return
		}
		for _, r := range s.Roles {
			if r.Name == "" {
				t.Fatal("role without a name accepted")
			}
			for _, n := range r.Nodes {
				if n.VMID < 0 {
					t.Fatalf("node with VM ID %d accepted", n.VMID)
				}
			}
		}
	})
}

func TestVMAddrs(t *testing.T) {
	t.Parallel()
	vm, err := onegate.DecodeVM([]byte(`{"VM":{"ID":"1","TEMPLATE":{
		"NIC":[{"IP":"10.0.0.1","IP6_GLOBAL":"2001:db8::1","IP6_SITE":"fd00::1","IP6_LINK":"fe80::1"},{"IP":"bogus"}],
		"NIC_ALIAS":[{"IP":"::ffff:10.0.0.2"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range vm.Addrs() {
		got = append(got, a.String())
	}
	if want := "10.0.0.1 2001:db8::1 fd00::1 10.0.0.2"; strings.Join(got, " ") != want {
		t.Errorf("Addrs = %v, want %s (no link-local, no junk, mapped unmapped)", got, want)
	}
}
