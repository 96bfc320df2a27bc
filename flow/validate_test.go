package flow

import (
	"strings"
	"testing"
)

// ok7 and ok6 are minimal valid documents; cases edit them.
const (
	ok7 = `{"name":"k","deployment":"straight","ready_status_gate":true,
 "networks":{"Private":"M|network|Nodes||id:0"},
 "user_inputs":{"ONEAPP_K8S_PODS_NETWORK":"O|text|Pods||10.244.0.0/16","ONEAPP_K8S_SERVICES_NETWORK":"O|text|Services||10.96.0.0/12"},
 "roles":[
  {"name":"master","type":"vm","template_id":1,"cardinality":1,"template_contents":{"NIC":[{"NAME":"NIC0","NETWORK_ID":"$Private"}]}},
  {"name":"worker","type":"vm","template_id":2,"cardinality":2,"min_vms":1,"max_vms":5,"parents":["master"],
   "template_contents":{"NIC":[{"NETWORK_ID":"$Private"}]},
   "elasticity_policies":[{"type":"CHANGE","adjust":1,"expression":"CPU > 80","period_number":3,"period":60}]}]}`
	ok6 = `{"name":"k","deployment":"straight","ready_status_gate":true,
 "networks":{"Private":"M|network|Nodes||id:0"},
 "custom_attrs":{"ONEAPP_K8S_PODS_NETWORK":"O|text|Pods||10.244.0.0/16"},
 "roles":[
  {"name":"master","vm_template":1,"cardinality":1,"vm_template_contents":"NIC = [ NAME = \"NIC0\", NETWORK_ID = \"$Private\" ]\n"},
  {"name":"worker","vm_template":2,"cardinality":2,"parents":["master"],"min_vms":1,"max_vms":5,
   "scheduled_policies":[{"type":"CARDINALITY","adjust":3,"recurrence":"0 8 * * 1-5"}]}]}`
)

// withoutSingleMaster drops the warning every 1-master document gets (it
// is not HA), which the fixtures here are; TestMasterCounts checks it.
func withoutSingleMaster(ps []Problem) []Problem {
	var out []Problem
	for _, p := range ps {
		if !strings.Contains(p.String(), "1 master: the control plane is not highly available") {
			out = append(out, p)
		}
	}
	return out
}

// TestValidateRules: each rule with a document that breaks it (want holds
// the expected "<severity> <path>: <fragment>") and, through the ok
// documents, one that passes.
func TestValidateRules(t *testing.T) {
	t.Parallel()
	for _, base := range []struct {
		name string
		doc  string
	}{{"7", ok7}, {"6", ok6}} {
		if ps := withoutSingleMaster(Validate([]byte(base.doc), ValidateOptions{})); len(ps) != 0 {
			t.Errorf("ok%s has problems: %v", base.name, ps)
		}
	}
	r7 := func(old, new string) string { return mustReplace(t, ok7, old, new) }
	r6 := func(old, new string) string { return mustReplace(t, ok6, old, new) }
	cases := []struct {
		name string
		doc  string
		opts ValidateOptions
		want string
	}{
		{"not json", `{"name":`, ValidateOptions{}, "error $: not JSON"},
		{"empty", ``, ValidateOptions{}, "error $: empty document"},
		{"not object", `[1]`, ValidateOptions{}, "error $: want a JSON object"},
		{"trailing data", ok7 + `{}`, ValidateOptions{}, "error $: not JSON: data after"},
		{"missing name", r7(`"name":"k",`, ``), ValidateOptions{}, "error $.name: missing"},
		{"null name is absent", r7(`"name":"k",`, `"name":null,`), ValidateOptions{}, "error $.name: missing"},
		{"missing roles", `{"name":"k"}`, ValidateOptions{}, "error $.roles: missing"},
		{"roles not array", `{"name":"k","roles":{}}`, ValidateOptions{}, "error $.roles: want an array"},
		{"bad deployment", r7(`"deployment":"straight"`, `"deployment":"fast"`), ValidateOptions{}, `error $.deployment: "fast": want one of`},
		{"bad shutdown", r7(`"name":"k",`, `"name":"k","shutdown_action":"stop",`), ValidateOptions{}, "error $.shutdown_action"},
		{"gate not bool", r7(`"ready_status_gate":true`, `"ready_status_gate":"yes"`), ValidateOptions{}, "error $.ready_status_gate: want true or false"},
		{"networks_values not objects", r7(`"name":"k",`, `"name":"k","networks_values":[1],`), ValidateOptions{}, "error $.networks_values[0]: want an object"},
		{"role type missing", r7(`"type":"vm","template_id":1`, `"template_id":1`), ValidateOptions{}, "error $.roles[0].type: missing"},
		{"role type unknown", r7(`"type":"vm","template_id":1`, `"type":"lxc","template_id":1`), ValidateOptions{}, `error $.roles[0].type: "lxc"`},
		{"template_id missing", r7(`"template_id":1,`, ``), ValidateOptions{}, "error $.roles[0].template_id: missing"},
		{"template_id not int", r7(`"template_id":1,`, `"template_id":"one",`), ValidateOptions{}, `error $.roles[0].template_id: "one" is not an integer`},
		{"template_id bool", r7(`"template_id":1,`, `"template_id":true,`), ValidateOptions{}, "error $.roles[0].template_id: true is not an integer"},
		{"template_id numeric string", r7(`"template_id":1,`, `"template_id":" 1 ",`), ValidateOptions{}, "warning $.roles[0].template_id: \" 1 \" is a string"},
		{"template_id float", r7(`"template_id":1,`, `"template_id":1.5,`), ValidateOptions{}, "warning $.roles[0].template_id: 1.5 is not an integer: the server truncates it to 1"},
		{"template_id negative", r7(`"template_id":1,`, `"template_id":-1,`), ValidateOptions{}, "warning $.roles[0].template_id: -1 is no VM template"},
		{"role name pattern", r7(`"name":"worker"`, `"name":"k8s-worker"`), ValidateOptions{}, `error $.roles[1].name: "k8s-worker": role names may hold only`},
		{"role name newline", r7(`"name":"worker"`, `"name":"a\nb"`), ValidateOptions{}, "error $.roles[1].name"},
		{"duplicate names", r7(`"name":"worker"`, `"name":"master"`), ValidateOptions{}, `error $.roles[1].name: role name "master" is already used`},
		{"huge max_vms", r7(`"max_vms":5`, `"max_vms":9223372036854775807`), ValidateOptions{}, "warning $.roles[1].max_vms: 9223372036854775807 VMs: beyond the 5000 nodes Kubernetes supports"},
		{"cardinality out of range", r7(`"cardinality":2`, `"cardinality":1e30`), ValidateOptions{}, "error $.roles[1].cardinality: 1e30 is not an integer OpenNebula can hold"},
		{"negative cardinality", r7(`"cardinality":2`, `"cardinality":-2`), ValidateOptions{}, "error $.roles[1].cardinality: -2: want 0 or more"},
		{"min above cardinality", r7(`"min_vms":1`, `"min_vms":3`), ValidateOptions{}, "error $.roles[1].min_vms: min_vms 3 is above the cardinality 2"},
		{"max below cardinality", r7(`"max_vms":5`, `"max_vms":1`), ValidateOptions{}, "error $.roles[1].max_vms: max_vms 1 is below the cardinality 2"},
		{"policies without min", r7(`"min_vms":1,`, ``), ValidateOptions{}, "error $.roles[1]: a role with elasticity or scheduled policies needs both min_vms and max_vms"},
		{"policies without max 6", r6(`"max_vms":5,`, ``), ValidateOptions{}, "error $.roles[1]: a role with elasticity or scheduled policies needs both"},
		{"policy type", r7(`"type":"CHANGE"`, `"type":"GROW"`), ValidateOptions{}, `error $.roles[1].elasticity_policies[0].type: "GROW"`},
		{"policy adjust missing", r7(`"adjust":1,`, ``), ValidateOptions{}, "error $.roles[1].elasticity_policies[0].adjust: missing"},
		{"policy expression grammar", r7(`"CPU > 80"`, `"CPU >> 80"`), ValidateOptions{}, "error $.roles[1].elasticity_policies[0].expression: expression \"CPU >> 80\" does not parse"},
		{"policy expression empty", r7(`"CPU > 80"`, `""`), ValidateOptions{}, "error $.roles[1].elasticity_policies[0].expression: must not be empty"},
		{"policy period negative", r7(`"period":60`, `"period":-60`), ValidateOptions{}, "error $.roles[1].elasticity_policies[0].period: -60: want 0 or more"},
		{"min_adjust_step zero", r7(`"period":60`, `"period":60,"min_adjust_step":0`), ValidateOptions{}, "error $.roles[1].elasticity_policies[0].min_adjust_step: 0: want 1 or more"},
		{"scheduled both", r6(`"recurrence":"0 8 * * 1-5"`, `"recurrence":"0 8 * * 1-5","start_time":"1700000000"`), ValidateOptions{}, "error $.roles[1].scheduled_policies[0]: set exactly one of start_time and recurrence"},
		{"scheduled neither", r6(`,"recurrence":"0 8 * * 1-5"`, ``), ValidateOptions{}, "error $.roles[1].scheduled_policies[0]: set exactly one"},
		{"bad cron", r6(`"0 8 * * 1-5"`, `"0 25 * * 1-5"`), ValidateOptions{}, "error $.roles[1].scheduled_policies[0].recurrence"},
		{"odd start_time", r6(`"recurrence":"0 8 * * 1-5"`, `"start_time":"next tuesday"`), ValidateOptions{}, "warning $.roles[1].scheduled_policies[0].start_time"},
		{"vr floating", r7(`"type":"vm","template_id":1,"cardinality":1`, `"type":"vr","template_id":1,"cardinality":3`), ValidateOptions{}, "error $.roles[0].template_contents.NIC: a virtual router role with cardinality 3 needs a NIC with FLOATING_IP"},
		{"missing parent", r7(`"parents":["master"]`, `"parents":["masters"]`), ValidateOptions{}, `error $.roles[1].parents[0]: parent "masters" is not a role of this service: role "worker" never deploys`},
		{"self parent", r7(`"parents":["master"]`, `"parents":["worker"]`), ValidateOptions{}, "error $.roles[1].parents: parents form a cycle (worker -> worker)"},
		{"cycle", r7(`"cardinality":1,"template_contents"`, `"cardinality":1,"parents":["worker"],"template_contents"`), ValidateOptions{}, "error $.roles[0].parents: parents form a cycle (master -> worker -> master)"},
		{"never deploys", strings.Replace(r7(`"parents":["master"]`, `"parents":["ghost"]`), `"name":"master","type":"vm"`, `"name":"master","parents":["worker"],"type":"vm"`, 1), ValidateOptions{}, `error $.roles[0].parents[0]: role "master" never deploys`},
		{"parents with deployment none", r7(`"deployment":"straight"`, `"deployment":"none"`), ValidateOptions{}, `warning $.deployment: parents are ignored`},
		{"even masters", r7(`"cardinality":1`, `"cardinality":2`), ValidateOptions{}, "error $.roles[0].cardinality: 2 masters: etcd keeps quorum while a majority of its members is up"},
		{"no masters", r7(`"cardinality":1`, `"cardinality":0`), ValidateOptions{}, `error $.roles[0].cardinality: role "master" is the control plane and has no VM`},
		{"master role by context", r7(`"template_contents":{"NIC":[{"NAME":"NIC0","NETWORK_ID":"$Private"}]}`, `"template_contents":{"NIC":[{"NAME":"NIC0","NETWORK_ID":"$Private"}],"CONTEXT":{"ONEAPP_ONEFLOW_MASTER_ROLE":"worker"}}`), ValidateOptions{}, "error $.roles[1].cardinality: 2 masters"},
		{"master role missing", r7(`"template_contents":{"NIC":[{"NAME":"NIC0","NETWORK_ID":"$Private"}]}`, `"template_contents":{"NIC":[{"NAME":"NIC0","NETWORK_ID":"$Private"}],"CONTEXT":{"ONEAPP_ONEFLOW_MASTER_ROLE":"cp"}}`), ValidateOptions{}, `error $.roles[0].template_contents.CONTEXT.ONEAPP_ONEFLOW_MASTER_ROLE: names the master role "cp"`},
		{"even masters 6", r6(`"cardinality":1`, `"cardinality":4`), ValidateOptions{}, "error $.roles[0].cardinality: 4 masters"},
		{"mix in a role", r7(`"template_id":2,`, `"template_id":2,"custom_attrs":{},`), ValidateOptions{}, "error $.roles[1]: mixes 6.x keys (custom_attrs) and 7.x keys (type, template_id, template_contents) in one role"},
		{"mix across roles", r7(`{"name":"worker","type":"vm","template_id":2`, `{"name":"worker","vm_template":2`), ValidateOptions{}, "error $.roles: 6.x roles ($.roles[1]) next to 7.x roles ($.roles[0])"},
		{"mix top level", r7(`"user_inputs":{`, `"custom_attrs":{},"user_inputs":{`), ValidateOptions{}, "error $: mixes 6.x custom_attrs and 7.x user_inputs"},
		{"6.x forced as 7", ok6, ValidateOptions{Version: Version7}, "warning $: a 6.x document: the 7.x server converts it"},
		{"7.x forced as 6", ok7, ValidateOptions{Version: Version6}, "error $.roles[0].vm_template: missing"},
		{"bad forced version", ok7, ValidateOptions{Version: 5}, "error $: unsupported OneFlow version"},
		{"input fields", r7(`"O|text|Pods||10.244.0.0/16"`, `"O|text|Pods"`), ValidateOptions{}, "warning $.user_inputs.ONEAPP_K8S_PODS_NETWORK: short form"},
		{"input 4 fields", r7(`"O|text|Pods||10.244.0.0/16"`, `"O|text|Pods|10.244.0.0/16"`), ValidateOptions{}, "error $.user_inputs.ONEAPP_K8S_PODS_NETWORK: \"O|text|Pods|10.244.0.0/16\": 4 |-separated fields"},
		{"input mandatory flag", r7(`"O|text|Pods||10.244.0.0/16"`, `"X|text|Pods||10.244.0.0/16"`), ValidateOptions{}, "error $.user_inputs.ONEAPP_K8S_PODS_NETWORK: \"X|text|Pods||10.244.0.0/16\": first field"},
		{"input type", r7(`"O|text|Pods||10.244.0.0/16"`, `"O|string|Pods||10.244.0.0/16"`), ValidateOptions{}, `error $.user_inputs.ONEAPP_K8S_PODS_NETWORK: "O|string|Pods||10.244.0.0/16": unknown type "string"`},
		{"input not string", r7(`"ONEAPP_K8S_PODS_NETWORK":"O|text|Pods||10.244.0.0/16"`, `"ONEAPP_K8S_PODS_NETWORK":5`), ValidateOptions{}, "error $.user_inputs.ONEAPP_K8S_PODS_NETWORK: want a user input string"},
		{"role input 6", r6(`"vm_template":2,`, `"vm_template":2,"custom_attrs":{"X":"O|list|x||a"},`), ValidateOptions{}, `error $.roles[1].custom_attrs.X: "O|list|x||a": params ""`},
		{"network id trap", r7(`|Nodes||id:0"`, `|Nodes||id:"`), ValidateOptions{}, "warning $.networks.Private: \"M|network|Nodes||id:\" has no default network"},
		{"network id trap answered", r7(`|Nodes||id:0"}`, `|Nodes||id:"},"networks_values":[{"Private":{"id":"3"}}]`), ValidateOptions{}, ""},
		{"network string", r7(`|Nodes||id:0"`, `|Nodes|id:0"`), ValidateOptions{}, "error $.networks.Private: \"M|network|Nodes|id:0\": want 5"},
		{"network type", r7(`"M|network|Nodes||id:0"`, `"M|text|Nodes||id:0"`), ValidateOptions{}, "error $.networks.Private: \"M|text|Nodes||id:0\": type must be network"},
		{"network default", r7(`|Nodes||id:0"`, `|Nodes||vnet:0"`), ValidateOptions{}, "error $.networks.Private: \"M|network|Nodes||vnet:0\": the default must be id:N"},
		{"networks_values unknown", r7(`|Nodes||id:0"}`, `|Nodes||id:0"},"networks_values":[{"Public":{"id":"3"}}]`), ValidateOptions{}, `error $.networks_values[0].Public: "Public" is not declared`},
		{"networks_values two ids", r7(`|Nodes||id:0"}`, `|Nodes||id:0"},"networks_values":[{"Private":{"id":"3","template_id":"4"}}]`), ValidateOptions{}, "error $.networks_values[0].Private: set exactly one of id, template_id and reserve_from"},
		{"nic object", r7(`"NIC":[{"NETWORK_ID":"$Private"}]`, `"NIC":{"NETWORK_ID":"$Private"}`), ValidateOptions{}, "error $.roles[1].template_contents.NIC: want a list of NICs"},
		{"nic unknown network", r7(`"NIC":[{"NETWORK_ID":"$Private"}]`, `"NIC":[{"NETWORK_ID":"$Public"}]`), ValidateOptions{}, "error $.roles[1].template_contents.NIC[0].NETWORK_ID: network $Public is not declared"},
		{"nic unknown network 6", r6(`NETWORK_ID = \"$Private\"`, `NETWORK_ID = \"$Public\"`), ValidateOptions{}, "error $.roles[0].vm_template_contents: NIC network $Public is not declared"},
		{"context replaced 6", r6(`\"$Private\" ]\n`, `\"$Private\" ]\nCONTEXT = [ A = \"B\" ]\n`), ValidateOptions{}, "warning $.roles[0].vm_template_contents: sets CONTEXT = [...]"},
		{"report ready 6", r6(`\"$Private\" ]\n`, `\"$Private\" ]\nREPORT_READY = \"YES\"\n`), ValidateOptions{}, "warning $.roles[0].vm_template_contents: REPORT_READY"},
		{"report ready 7", r7(`"NIC":[{"NETWORK_ID":"$Private"}]`, `"NIC":[{"NETWORK_ID":"$Private"}],"CONTEXT":{"REPORT_READY":"YES"}`), ValidateOptions{}, "warning $.roles[1].template_contents.CONTEXT.REPORT_READY"},
		{"context not object", r7(`"NIC":[{"NETWORK_ID":"$Private"}]`, `"NIC":[{"NETWORK_ID":"$Private"}],"CONTEXT":"A=B"`), ValidateOptions{}, "error $.roles[1].template_contents.CONTEXT: want an object"},
		{"gate off", r7(`"ready_status_gate":true`, `"ready_status_gate":false`), ValidateOptions{}, "warning $.ready_status_gate: not true"},
		{"pods services overlap", r7(`Services||10.96.0.0/12`, `Services||10.244.128.0/20`), ValidateOptions{}, "error $.user_inputs.ONEAPP_K8S_SERVICES_NETWORK: service network 10.244.128.0/20 overlaps pod network 10.244.0.0/16"},
		{"pods value wins", r7(`"name":"k",`, `"name":"k","user_inputs_values":{"ONEAPP_K8S_PODS_NETWORK":"10.96.0.0/16"},`), ValidateOptions{}, "error $.user_inputs.ONEAPP_K8S_SERVICES_NETWORK: service network 10.96.0.0/12 overlaps pod network 10.96.0.0/16"},
		{"bad cidr", r7(`Pods||10.244.0.0/16`, `Pods||10.244.0.1/16`), ValidateOptions{}, "error $.user_inputs.ONEAPP_K8S_PODS_NETWORK: ONEAPP_K8S_PODS_NETWORK: \"10.244.0.1/16\" has host bits set"},
		{"node network overlap", ok7, ValidateOptions{NodeNetwork: "10.96.0.0/24"}, "error node-network: node network 10.96.0.0/24 overlaps service network"},
		{"node network bad", ok7, ValidateOptions{NodeNetwork: "lan"}, "error node-network"},
		{"address ip", r7(`"name":"k",`, `"name":"k","user_inputs_values":{"ONEAPP_K8S_ADDRESS":"10.244.1.1"},`), ValidateOptions{}, `error $.user_inputs_values.ONEAPP_K8S_ADDRESS: ONEAPP_K8S_ADDRESS: "10.244.1.1" is one IP address, which cannot be every VM's: give the network as a CIDR, e.g. 10.244.1.0/24`},
		{"address ip default", r7(`"ONEAPP_K8S_PODS_NETWORK":`, `"ONEAPP_K8S_ADDRESS":"O|text|NIC||10.0.0.1","ONEAPP_K8S_PODS_NETWORK":`), ValidateOptions{}, `error $.user_inputs.ONEAPP_K8S_ADDRESS: ONEAPP_K8S_ADDRESS: "10.0.0.1" is one IP address`},
		{"address in pods", r7(`"name":"k",`, `"name":"k","user_inputs_values":{"ONEAPP_K8S_ADDRESS":"10.244.1.0/24"},`), ValidateOptions{}, "error $.user_inputs_values.ONEAPP_K8S_ADDRESS: ONEAPP_K8S_ADDRESS: the nodes' range 10.244.1.0/24 overlaps the pod network 10.244.0.0/16"},
		{"address cidr", r7(`"name":"k",`, `"name":"k","user_inputs_values":{"ONEAPP_K8S_ADDRESS":"192.168.0.0/24"},`), ValidateOptions{}, ""},
		{"address network", r7(`"name":"k",`, `"name":"k","user_inputs_values":{"ONEAPP_K8S_ADDRESS":"k8s-private"},`), ValidateOptions{}, ""},
		{"address bad name", r7(`"name":"k",`, `"name":"k","user_inputs_values":{"ONEAPP_K8S_ADDRESS":"net$1"},`), ValidateOptions{}, `error $.user_inputs_values.ONEAPP_K8S_ADDRESS: ONEAPP_K8S_ADDRESS: "net$1" is neither a CIDR`},
		{"node name prefix", r7(`"name":"k",`, `"name":"k","user_inputs_values":{"ONEAPP_K8S_NODENAME":"lab-node"},`), ValidateOptions{}, ""},
		{"node name not a label", r7(`"name":"k",`, `"name":"k","user_inputs_values":{"ONEAPP_K8S_NODENAME":"Node_1"},`), ValidateOptions{}, `error $.user_inputs_values.ONEAPP_K8S_NODENAME: ONEAPP_K8S_NODENAME: "Node_1" is not a DNS label`},
		{"node name too long", r7(`"name":"k",`, `"name":"k","user_inputs_values":{"ONEAPP_K8S_NODENAME":"`+strings.Repeat("n", 41)+`"},`), ValidateOptions{}, `error $.user_inputs_values.ONEAPP_K8S_NODENAME: ONEAPP_K8S_NODENAME: "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn" is 41 characters: the node name prefix may have at most 40`},
		{"node name default", r7(`"ONEAPP_K8S_PODS_NETWORK":`, `"ONEAPP_K8S_NODENAME":"O|text|Prefix||-node","ONEAPP_K8S_PODS_NETWORK":`), ValidateOptions{}, `error $.user_inputs.ONEAPP_K8S_NODENAME: ONEAPP_K8S_NODENAME: "-node" is not a DNS label`},
		{"old version input", r7(`"ONEAPP_K8S_PODS_NETWORK":`, `"ONEAPP_K8S_VERSION":"O|text|Version||v1.31.2","ONEAPP_K8S_PODS_NETWORK":`), ValidateOptions{}, "warning $.user_inputs.ONEAPP_K8S_VERSION: ONEAPP_K8S_VERSION is no longer an input: the image carries one Kubernetes release"},
		{"old version input 6", r6(`"ONEAPP_K8S_PODS_NETWORK":`, `"ONEAPP_K8S_VERSION":"O|text|Version||","ONEAPP_K8S_PODS_NETWORK":`), ValidateOptions{}, "warning $.custom_attrs.ONEAPP_K8S_VERSION: ONEAPP_K8S_VERSION is no longer an input"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ps := withoutSingleMaster(Validate([]byte(tc.doc), tc.opts))
			var lines []string
			for _, p := range ps {
				lines = append(lines, p.String())
			}
			all := strings.Join(lines, "\n")
			if tc.want == "" {
				if len(ps) != 0 {
					t.Errorf("want no problems, got:\n%s", all)
				}
				return
			}
			if !strings.Contains(all, tc.want) {
				t.Errorf("want a line containing %q, got:\n%s", tc.want, all)
			}
			if strings.HasPrefix(tc.want, "error") != HasErrors(ps) {
				t.Errorf("HasErrors = %v for:\n%s", HasErrors(ps), all)
			}
		})
	}
}

func mustReplace(t *testing.T, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("%q not in the base document", old)
	}
	return strings.Replace(s, old, new, 1)
}

func TestValidateSorted(t *testing.T) {
	t.Parallel()
	doc := `{"name":"k","roles":[` + strings.Repeat(`{"name":"a-b","type":"vm"},`, 11) + `{"name":"c","type":"vm","template_id":0}]}`
	ps := Validate([]byte(doc), ValidateOptions{})
	for i := 1; i < len(ps); i++ {
		if naturalCompare(ps[i-1].Path, ps[i].Path) > 0 {
			t.Fatalf("not sorted: %v before %v", ps[i-1], ps[i])
		}
	}
	if ps[len(ps)-1].Path != "$.roles[10].type" && !strings.HasPrefix(ps[len(ps)-1].Path, "$.roles[10]") {
		t.Errorf("roles[10] should sort last, got %v", ps[len(ps)-1])
	}
}

func FuzzValidate(f *testing.F) {
	for _, s := range []string{ok7, ok6, `{}`, `[]`, `{"roles":[{"parents":["a"],"name":"a"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		for _, v := range []OneFlowVersion{VersionAuto, Version6, Version7} {
			for _, p := range Validate(doc, ValidateOptions{Version: v}) {
				if p.Path == "" || p.Message == "" || (p.Severity != Error && p.Severity != Warning) {
					t.Fatalf("malformed problem %#v", p)
				}
				if strings.ContainsAny(p.String(), "\n\r") {
					t.Fatalf("problem spans lines: %q", p)
				}
			}
		}
	})
}
