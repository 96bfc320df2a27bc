package context_test

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

func TestSettingsDefaults(t *testing.T) {
	t.Parallel()
	got, err := vmcontext.Vars{}.Settings()
	if err != nil {
		t.Fatal(err)
	}
	want := vmcontext.Settings{
		Contract:        1,
		MasterRole:      "master",
		Port:            6443,
		PodsNetwork:     netip.MustParsePrefix("10.244.0.0/16"),
		ServicesNetwork: netip.MustParsePrefix("10.96.0.0/12"),
		CNI:             "flannel",
		TaintedMaster:   true, // kubeadm's default: keep workloads off the control plane
		TokenTTL:        time.Hour,
		MasterVMID:      -1,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Settings = %+v\nwant       %+v", got, want)
	}
}

func TestSettingsValues(t *testing.T) {
	t.Parallel()
	got, err := vmcontext.Vars{
		"ONEKUBE_CONTRACT_VERSION":           "1",
		"ONEAPP_ONEFLOW_MASTER_ROLE":         "control-plane",
		"ONEAPP_K8S_ADDRESS":                 "10.0.0.0/24",
		"ONEAPP_K8S_PORT":                    " 8443 ",
		"ONEAPP_K8S_PODS_NETWORK":            "192.168.0.0/16",
		"ONEAPP_K8S_SERVICES_NETWORK":        "172.16.0.0/20",
		"ONEAPP_K8S_NODENAME":                "node-1",
		"ONEAPP_K8S_VERSION":                 "1.36.3",
		"ONEAPP_K8S_CNI_PLUGIN":              "Calico",
		"ONEAPP_K8S_TAINTED_MASTER":          "NO",
		"ONEAPP_K8S_TOKEN_TTL":               "15m",
		"ONEAPP_K8S_IGNORE_PREFLIGHT_ERRORS": " NumCPU, SystemVerification,NumCPU ",
		"ONEKUBE_MASTER_VM_ID":               "0",
	}.Settings()
	if err != nil {
		t.Fatal(err)
	}
	want := vmcontext.Settings{
		Contract: 1, MasterRole: "control-plane", Address: vmcontext.AddressSelector{CIDR: netip.MustParsePrefix("10.0.0.0/24")}, Port: 8443,
		PodsNetwork: netip.MustParsePrefix("192.168.0.0/16"), ServicesNetwork: netip.MustParsePrefix("172.16.0.0/20"),
		NodePrefix: "node-1", Version: "v1.36.3", CNI: "calico", TaintedMaster: false, TokenTTL: 15 * time.Minute,
		IgnorePreflight: []string{"NumCPU", "SystemVerification"}, MasterVMID: 0,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Settings = %+v\nwant       %+v", got, want)
	}
}

func TestSettingsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key, value string
		msg        string
	}{
		{"ONEAPP_K8S_PORT", "0", "not a TCP port"},
		{"ONEKUBE_MASTER_VM_ID", "${master.vm.id}", "not a VM ID"},
		{"ONEKUBE_MASTER_VM_ID", "-3", "not a VM ID"},
		{"ONEAPP_K8S_PORT", "65536", "not a TCP port"},
		{"ONEAPP_K8S_PORT", "http", "not a TCP port"},
		{"ONEAPP_K8S_PODS_NETWORK", "10.244.0.0", "not a CIDR"},
		{"ONEAPP_K8S_PODS_NETWORK", "10.244.1.0/16", "did you mean 10.244.0.0/16"},
		{"ONEAPP_K8S_SERVICES_NETWORK", "10.244.128.0/20", "overlaps ONEAPP_K8S_PODS_NETWORK"},
		{"ONEAPP_K8S_SERVICES_NETWORK", "bogus", "not a CIDR"},
		{"ONEAPP_K8S_NODENAME", "Node_1", "not a node name prefix"},
		{"ONEAPP_K8S_NODENAME", "node-1.example", "not a node name prefix"},
		{"ONEAPP_K8S_NODENAME", strings.Repeat("n", 41), "at most 40"},
		{"ONEAPP_K8S_ADDRESS", "10.0.0.5", "give the network as a CIDR"},
		{"ONEAPP_K8S_PODS_NETWORK", "10.244.0.0/25", "smaller than one node's /24"},
		{"ONEAPP_K8S_PODS_NETWORK", "10.0.0.0/7", "kubeadm allows /8 to /24"},
		{"ONEAPP_K8S_SERVICES_NETWORK", "10.96.0.0/11", "too large"},
		{"ONEAPP_K8S_SERVICES_NETWORK", "fd20::/64", "too large"},
		{"ONEAPP_K8S_SERVICES_NETWORK", "fd20::/112", "different IP families"},
		{"ONEAPP_K8S_VERSION", "latest", "not a Kubernetes version"},
		{"ONEAPP_K8S_VERSION", "1.31", "major.minor.patch"}, // kubeadm would look "1.31" up online
		{"ONEAPP_K8S_TOKEN_TTL", "0", "positive duration"},  // no eternal join tokens
		{"ONEAPP_K8S_CNI_PLUGIN", "weave", "not one of flannel, calico, none"},
		{"ONEAPP_K8S_IGNORE_PREFLIGHT_ERRORS", "all", `"all" is not allowed`},
		{"ONEAPP_K8S_IGNORE_PREFLIGHT_ERRORS", "NumCPU,Swap on", "not a kubeadm preflight check name"},
		{"ONEAPP_K8S_TAINTED_MASTER", "maybe", "neither YES nor NO"},
		{"ONEAPP_K8S_TOKEN_TTL", "1 day", "not a positive duration"},
		{"ONEAPP_K8S_TOKEN_TTL", "-1h", "not a positive duration"},
		{"ONEAPP_ONEFLOW_MASTER_ROLE", "two words", "not a role name"},
		{"ONEKUBE_CONTRACT_VERSION", "zero", "not a contract version"},
		{"ONEAPP_K8S_CERT_VALIDITY", "1y", "not a positive duration"},
		{"ONEAPP_K8S_CERT_VALIDITY", "-10m", "not a positive duration"},
		{"ONEAPP_K8S_CERT_VALIDITY", "1m", "outside 2m0s to 8760h"},
		{"ONEAPP_K8S_CERT_VALIDITY", "8761h", "outside 2m0s to 8760h"},
		{"ONEAPP_K8S_CERT_VALIDITY", "720h", "not longer than the renewal threshold 720h0m0s"}, // the default threshold
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			t.Parallel()
			_, err := vmcontext.Vars{tt.key: tt.value}.Settings()
			var se *vmcontext.SettingError
			if !errors.As(err, &se) || se.Key != tt.key {
				t.Fatalf("error = %v, want a SettingError for %s", err, tt.key)
			}
			if !strings.HasPrefix(err.Error(), tt.key+": ") || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q, want %q naming %s", err, tt.msg, tt.key)
			}
		})
	}
}

// ONEAPP_K8S_CERT_VALIDITY is checked against the renewal threshold the
// same context sets: a leaf due as soon as it is issued is refused.
func TestSettingsCertValidity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		validity, before string
		want             time.Duration
		msg              string
	}{
		{"", "", 0, ""},
		{"8760h", "", 8760 * time.Hour, ""},
		{"5m", "2m", 5 * time.Minute, ""},
		{"5m", "5m", 0, "not longer than the renewal threshold 5m0s"},
		{"5m", "", 0, "not longer than the renewal threshold 720h0m0s"},
		{"800h", "junk", 800 * time.Hour, ""}, // serve reads a bad threshold as the default, so does this check
		{" 3m ", "1m", 3 * time.Minute, ""},
	}
	for _, tt := range tests {
		t.Run(tt.validity+"/"+tt.before, func(t *testing.T) {
			t.Parallel()
			s, err := vmcontext.Vars{"ONEAPP_K8S_CERT_VALIDITY": tt.validity, "ONEAPP_K8S_CERT_RENEW_BEFORE": tt.before}.Settings()
			if tt.msg != "" {
				if err == nil || !strings.Contains(err.Error(), tt.msg) {
					t.Fatalf("error %v, want %q", err, tt.msg)
				}
				return
			}
			if err != nil || s.CertValidity != tt.want {
				t.Fatalf("CertValidity %s, %v; want %s", s.CertValidity, err, tt.want)
			}
		})
	}
}

func TestSettingsReportsEveryProblem(t *testing.T) {
	t.Parallel()
	_, err := vmcontext.Vars{"ONEAPP_K8S_PORT": "x", "ONEAPP_K8S_CNI_PLUGIN": "x"}.Settings()
	if err == nil || !strings.Contains(err.Error(), "ONEAPP_K8S_PORT") || !strings.Contains(err.Error(), "ONEAPP_K8S_CNI_PLUGIN") {
		t.Errorf("error = %v, want both variables named", err)
	}
}

func TestSettingsContractTooNew(t *testing.T) {
	t.Parallel()
	_, err := vmcontext.Vars{"ONEKUBE_CONTRACT_VERSION": "99"}.Settings()
	if !errors.Is(err, vmcontext.ErrContractTooNew) {
		t.Fatalf("error = %v, want ErrContractTooNew", err)
	}
	if !strings.Contains(err.Error(), "ONEKUBE_CONTRACT_VERSION") {
		t.Errorf("error %q does not name the variable", err)
	}
}

func TestSettingsIPv6(t *testing.T) {
	t.Parallel()
	got, err := vmcontext.Vars{"ONEAPP_K8S_PODS_NETWORK": "fd10::/56", "ONEAPP_K8S_SERVICES_NETWORK": "fd20::/112", "ONEAPP_K8S_ADDRESS": "fd00::/64"}.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if got.PodsNetwork.String() != "fd10::/56" || got.ServicesNetwork.String() != "fd20::/112" || got.Address.CIDR.String() != "fd00::/64" {
		t.Errorf("Settings = %+v", got)
	}
}
