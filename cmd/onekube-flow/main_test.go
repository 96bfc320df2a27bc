package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onekube/onekube/flow"
	"github.com/onekube/onekube/flow/register"
	"github.com/onekube/onekube/flow/register/registertest"
)

// runCLI runs onekube-flow in-process with files under dir and env vars.
func runCLI(t *testing.T, stdin string, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	// create and kubeconfig keep the user's age key under the config
	// directory: a temporary one, never the machine's.
	cfg := t.TempDir()
	a := &app{
		stdin:  strings.NewReader(stdin),
		stdout: &out,
		stderr: &errb,
		env: register.Env{
			Getenv: func(k string) string {
				if v, ok := env[k]; ok || k != "XDG_CONFIG_HOME" {
					return v
				}
				return cfg
			},
			ReadFile: func(p string) ([]byte, error) {
				if s, ok := env["file:"+p]; ok {
					return []byte(s), nil
				}
				return nil, fs.ErrNotExist
			},
			Home: "/home/u",
		},
	}
	code = a.run(args)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRenderDefault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		v    flow.OneFlowVersion
	}{{nil, flow.Version7}, {[]string{"--oneflow", "7"}, flow.Version7}, {[]string{"--oneflow", "6"}, flow.Version6}} {
		code, out, errs := runCLI(t, "", nil, append([]string{"render"}, tc.args...)...)
		want, _ := flow.RenderService(flow.DefaultSpec(), tc.v)
		if code != 0 || out != string(want) {
			t.Errorf("%v: code %d, stdout is not the default rendering:\n%s\nstderr: %s", tc.args, code, out, errs)
		}
		if !strings.Contains(errs, "hint: role master has no VM template ID") {
			t.Errorf("stderr: %s", errs)
		}
	}
}

func TestRenderSpecAndFlags(t *testing.T) {
	t.Parallel()
	spec := writeFile(t, "c.yaml", "apiVersion: onekube.io/v1alpha1\nkind: Cluster\nmetadata: {name: lab}\nworker: {count: 3}\n")
	code, out, errs := runCLI(t, "", nil, "render", "-f", spec, "--workers", "5", "--master-template-id", "0",
		"--worker-template-id", "12", "--network-id", "3", "--cni", "calico", "--user-input", "EXTRA=O|text|x||y")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	var st flow.ServiceTemplate7
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if st.Name != "lab" || st.Roles[1].Cardinality != 5 || st.Roles[0].TemplateID != 0 || st.Roles[1].TemplateID != 12 ||
		!strings.HasSuffix(st.UserInputs["ONEAPP_K8S_CNI_PLUGIN"], "|calico") || st.UserInputs["EXTRA"] != "O|text|x||y" ||
		st.NetworksValues[0]["Private"].ID != "3" {
		t.Errorf("rendered: %s", out)
	}
	if strings.Contains(errs, "hint") {
		t.Errorf("hints with everything given: %s", errs)
	}

	// The same spec on stdin.
	code, out2, _ := runCLI(t, "apiVersion: onekube.io/v1alpha1\nkind: Cluster\nmetadata: {name: lab}\nworker: {count: 3}\n", nil,
		"render", "-f", "-", "--workers", "5", "--master-template-id", "0", "--worker-template-id", "12", "--network-id", "3",
		"--cni", "calico", "--user-input", "EXTRA=O|text|x||y")
	if code != 0 || out2 != out {
		t.Errorf("stdin spec renders differently (code %d)", code)
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	bad := writeFile(t, "bad.yaml", "apiVersion: onekube.io/v1alpha1\nkind: Cluster\nworker: {cpus: 2}\n")
	broken := writeFile(t, "broken.json", `{"name":"k","roles":[{"name":"a","type":"vm","template_id":1,"parents":["b"]}],"deployment":"straight"}`)
	good, _ := flow.RenderService(flow.DefaultSpec(), flow.Version6)
	goodFile := writeFile(t, "good.json", string(good))
	cases := []struct {
		args     []string
		stdin    string
		code     int
		inStdout string
		inStderr string
	}{
		{[]string{"render", "--masters", "2"}, "", 1, "", "master.count: 2 masters"},
		{[]string{"render", "-f", bad}, "", 1, "", "unknown field worker.cpus"},
		{[]string{"render", "-f", "/nonexistent.yaml"}, "", 1, "", "reading the spec"},
		{[]string{"render", "--oneflow", "8"}, "", 2, "", `--oneflow "8"`},
		{[]string{"render", "--bogus"}, "", 2, "", "unknown flag"},
		{[]string{"render", "extra-arg"}, "", 2, "", `unexpected argument "extra-arg": render takes no arguments; subcommands: instantiate, spec, vm-group, vm-template`},
		{[]string{"render", "--user-input", "NOEQUALS"}, "", 2, "", "want NAME="},
		{[]string{"frobnicate"}, "", 2, "", "unknown command"},
		{[]string{"render", "vm-template"}, "", 2, "", `--role ""`},
		{[]string{"render", "vm-template", "--role", "etcd"}, "", 2, "", `--role "etcd"`},
		{[]string{"render", "vm-template", "--role", "worker"}, "", 0, `NAME = "kubernetes-worker"`, ""},
		{[]string{"render", "instantiate"}, "", 1, "", "network.id"},
		{[]string{"render", "instantiate", "--network-id", "0"}, "", 0, `"user_inputs_values"`, ""},
		{[]string{"render", "instantiate", "--network-id", "0", "--oneflow", "6"}, "", 0, `"custom_attrs_values"`, ""},
		{[]string{"render", "spec", "--masters", "3"}, "", 0, "count: 3", ""},
		{[]string{"render", "vm-group", "--masters", "3"}, "", 0, "ROLE = [\n  NAME = \"master\",\n  POLICY = \"ANTI_AFFINED\" ]\n", ""},
		{[]string{"render", "vm-group", "--masters", "3", "--master-anti-affinity=false"}, "", 0, "", ""},
		{[]string{"render", "--masters", "3"}, "", 0, `"VMGROUP_NAME": "kubernetes-anti-affinity"`, `join VM group "kubernetes-anti-affinity"`},
		{[]string{"render", "--cooldown", "10", "--autoscale", "1:4"}, "", 0, `"cooldown": 10`, ""},
		{[]string{"render", "--autoscale", "1:4"}, "", 0, `"max_vms": 4`, ""},
		{[]string{"render", "--autoscale", "3:4"}, "", 1, "", "worker.min: min 3 is above the count 2"},
		{[]string{"render", "--cooldown", "-1"}, "", 1, "", "cooldown"},
		{[]string{"validate", broken}, "", 1, `error $.roles[0].parents[0]: parent "b" is not a role`, "1 errors"},
		{[]string{"validate", goodFile}, "", 0, "warning $.roles[0].vm_template", "0 errors"},
		{[]string{"validate"}, string(good), 0, "", "0 errors"},
		{[]string{"validate", "-", "--oneflow", "7"}, string(good), 0, "warning $: a 6.x document", ""},
		{[]string{"validate", "--oneflow", "5"}, "", 2, "", `--oneflow "5"`},
		{[]string{"validate", "a", "b"}, "", 2, "", "accepts between 0 and 1 arg"},
		{[]string{"validate", "--node-network", "10.244.0.0/24"}, string(good), 1, "error node-network", ""},
		{[]string{"validate"}, "not json", 1, "error $: not JSON", ""},
		{[]string{"--version"}, "", 0, "onekube-flow version", ""},
		{[]string{"--help"}, "", 0, "onekube-flow render | oneflow-template create", ""},
		{[]string{"render", "--help"}, "", 0, "Examples:", ""},
		{[]string{"completion", "bash"}, "", 0, "onekube-flow", ""},
		{[]string{"create"}, "", 1, "", "no OpenNebula credentials"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errs := runCLI(t, tc.stdin, nil, tc.args...)
			if code != tc.code || !strings.Contains(out, tc.inStdout) || !strings.Contains(errs, tc.inStderr) {
				t.Errorf("code %d (want %d)\nstdout: %s\nstderr: %s", code, tc.code, out, errs)
			}
		})
	}
}

func TestCreate(t *testing.T) {
	t.Parallel()
	of := &registertest.OneFlow{Pool: `{"DOCUMENT_POOL":{}}`, CreateID: 9}
	od := &registertest.Oned{Pool: registertest.VMPool(), NextID: 30}
	fsrv, osrv := httptest.NewServer(of), httptest.NewServer(od)
	t.Cleanup(fsrv.Close)
	t.Cleanup(osrv.Close)
	env := map[string]string{"ONEFLOW_URL": fsrv.URL, "ONE_XMLRPC": osrv.URL + "/RPC2", "file:/home/u/.one/one_auth": "alice:pw\n"}
	code, out, errs := runCLI(t, "", env, "create", "--name", "lab", "--oneflow", "6")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	want := "vm-template master 30 created (lab-master)\nvm-template worker 31 created (lab-worker)\nservice-template 9 created (lab)\n"
	if out != want {
		t.Errorf("stdout:\n%s", out)
	}
	if w := of.Writes(); len(w) != 1 || w[0].User != "alice" || w[0].Password != "pw" || !strings.Contains(w[0].Body, `"vm_template": 31`) {
		t.Errorf("oneflow writes: %+v", w)
	}
	if od.Calls[0].Params[0] != "alice:pw" || len(od.Bad) > 0 {
		t.Errorf("oned calls: %v %v", od.Calls, od.Bad)
	}

	// Again: the service template exists now; refused, exit 1, no writes.
	of.Pool = `{"DOCUMENT_POOL":{"DOCUMENT":{"ID":"9","UID":"0","UNAME":"alice","NAME":"lab"}}}`
	od.Pool = registertest.VMPool(registertest.VMTemplate{ID: 30, Name: "lab-master"}, registertest.VMTemplate{ID: 31, Name: "lab-worker"})
	code, _, errs = runCLI(t, "", env, "create", "--name", "lab", "--oneflow", "6")
	if code != 1 || !strings.Contains(errs, `already exists: service template "lab" (ID 9); pass --replace`) || len(of.Writes()) != 1 {
		t.Errorf("re-run: code %d, %s", code, errs)
	}
	code, out, errs = runCLI(t, "", env, "create", "--name", "lab", "--oneflow", "6", "--replace")
	if code != 0 || !strings.Contains(out, "service-template 9 updated (lab)") {
		t.Errorf("replace: code %d\n%s\n%s", code, out, errs)
	}
	// OneFlow's plain-text errors reach the user verbatim.
	of.Fail = "Mandatory document key 'type (string)' is missing"
	code, _, errs = runCLI(t, "", env, "create", "--name", "lab", "--replace", "--user", "bob", "--password", "other")
	if code != 1 || !strings.Contains(errs, "400 Bad Request: Mandatory document key 'type (string)' is missing") {
		t.Errorf("fail: code %d %s", code, errs)
	}
}

// TestInputsOfIssue8: the version is the image's, the address selects a
// NIC, the node name is a prefix; each refusal names the input and exits 1.
func TestInputsOfIssue8(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"render", "--k8s-version", "v1.30.0"}, 1, `kubernetes.version: "v1.30.0": the appliance image carries one Kubernetes release`},
		{[]string{"render", "--api-address", "10.0.0.5"}, 1, `kubernetes.address: ONEAPP_K8S_ADDRESS: "10.0.0.5" is one IP address, which cannot be every VM's: give the network as a CIDR, e.g. 10.0.0.0/24`},
		{[]string{"render", "--api-address", "10.0.0.0/24"}, 0, ""},
		{[]string{"render", "--api-address", "vnet-k8s"}, 0, ""},
	} {
		code, out, errs := runCLI(t, "", nil, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: code %d, stderr %s", tc.args, code, errs)
		}
		if strings.Contains(out, "ONEAPP_K8S_VERSION") {
			t.Errorf("%v: ONEAPP_K8S_VERSION rendered", tc.args)
		}
	}
	if _, out, _ := runCLI(t, "", nil, "render", "--help"); strings.Contains(out, "k8s-version") {
		t.Error("--k8s-version is listed in the help")
	}
	doc := `{"name":"k","roles":[{"name":"master","type":"vm","template_id":1,"cardinality":1}],
 "user_inputs_values":{"ONEAPP_K8S_NODENAME":"Worker_1"}}`
	code, out, _ := runCLI(t, doc, nil, "validate")
	if code != 1 || !strings.Contains(out, `error $.user_inputs_values.ONEAPP_K8S_NODENAME: ONEAPP_K8S_NODENAME: "Worker_1" is not a DNS label`) {
		t.Errorf("validate: code %d, stdout %s", code, out)
	}
}
