package marketplace

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/onekube/onekube/flow"
)

var update = flag.Bool("update", false, "rewrite golden files")

// applianceDir holds appliance.sh, versions.env and marketplace/.
const applianceDir = ".."

func generate(t *testing.T) map[string][]byte {
	t.Helper()
	sh, err := os.ReadFile(filepath.Join(applianceDir, PathAppliance))
	if err != nil {
		t.Fatal(err)
	}
	env, err := os.ReadFile(filepath.Join(applianceDir, "versions.env"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := Files(sh, env)
	if err != nil {
		t.Fatalf("Files: %v", err)
	}
	return files
}

// TestGolden is the drift check: the committed metadata and appliance.sh's
// generated block must equal a fresh generation from flow/. `make
// marketplace` (-update) rewrites them.
func TestGolden(t *testing.T) {
	files := generate(t)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		path := filepath.Join(applianceDir, p)
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, files[p], 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (run make marketplace)", p, err)
			continue
		}
		if !bytes.Equal(got, files[p]) {
			t.Errorf("%s is out of date with flow/ or versions.env: run make marketplace", p)
		}
	}
}

// The service templates survive the trip through YAML unchanged and still
// pass flow's own validator: YAML must not turn "YES" or numbers into other
// types.
func TestServiceRoundTrip(t *testing.T) {
	files := generate(t)
	for path, model := range map[string]flow.OneFlowVersion{PathService7: flow.Version7, PathService6: flow.Version6} {
		t.Run(model.String(), func(t *testing.T) {
			js, err := sigsyaml.YAMLToJSON(files[path])
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Roles    map[string]string `json:"roles"`
				Template json.RawMessage   `json:"opennebula_template"`
			}
			if err := json.Unmarshal(js, &doc); err != nil {
				t.Fatal(err)
			}
			want, err := flow.RenderService(flow.DefaultSpec(), model)
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			if err := json.Unmarshal(doc.Template, &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(want, &b); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("opennebula_template differs from flow.RenderService:\n got %s\nwant %s", doc.Template, want)
			}
			if ps := flow.Validate(doc.Template, flow.ValidateOptions{Version: model}); flow.HasErrors(ps) {
				t.Errorf("flow.Validate: %v", ps)
			}
			if len(doc.Roles) != 2 || doc.Roles[flow.RoleMaster] == "" || doc.Roles[flow.RoleWorker] == "" {
				t.Errorf("roles = %v, want master and worker mapped to the appliance", doc.Roles)
			}
		})
	}
}

// The VM appliance's template carries every user input of flow, with its
// default, and passes each to CONTEXT.
func TestImageTemplateInputs(t *testing.T) {
	js, err := sigsyaml.YAMLToJSON(generate(t)[PathImage])
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Template struct {
			Context     map[string]string `json:"context"`
			UserInputs  map[string]string `json:"user_inputs"`
			InputsOrder string            `json:"inputs_order"`
			Disk        any               `json:"disk"`
		} `json:"opennebula_template"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	inputs := flow.UserInputs(flow.DefaultSpec())
	var order []string
	for _, u := range inputs {
		order = append(order, u.Name)
		if got := doc.Template.UserInputs[u.Name]; got != u.String() {
			t.Errorf("user_inputs[%s] = %q, want %q", u.Name, got, u.String())
		}
		if got := doc.Template.Context[strings.ToLower(u.Name)]; got != "$"+u.Name {
			t.Errorf("context[%s] = %q, want $%s", strings.ToLower(u.Name), got, u.Name)
		}
	}
	if doc.Template.InputsOrder != strings.Join(order, ",") {
		t.Errorf("inputs_order = %q", doc.Template.InputsOrder)
	}
	if doc.Template.Disk != nil {
		t.Errorf("the marketplace template must not carry a DISK: %v", doc.Template.Disk)
	}
	if _, ok := doc.Template.Context["report_ready"]; ok {
		t.Error("CONTEXT sets REPORT_READY: one-context would report READY before kubeadm")
	}
}

// bash reads the generated ONE_SERVICE_PARAMS back to exactly flow's names
// and descriptions (quotes included).
func TestParamsBlockBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	inputs := flow.UserInputs(flow.DefaultSpec())
	inputs = append(inputs, flow.UserInput{Name: "X_QUOTE", Type: "text", Description: `it's "quoted" $HOME \n`, Mandatory: true})
	script := ParamsBlock(inputs) + `for x in "${ONE_SERVICE_PARAMS[@]}"; do printf '%s\0' "$x"; done`
	out, err := exec.Command(bash, "--norc", "-c", script).Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	words := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	var want []string
	for _, u := range inputs {
		mo := "O"
		if u.Mandatory {
			mo = "M"
		}
		want = append(want, u.Name, "bootstrap", u.Description, mo+"|"+u.Type)
	}
	if !slices.Equal(words, want) {
		t.Errorf("bash read\n%q\nwant\n%q", words, want)
	}
}

func TestSpliceParams(t *testing.T) {
	tests := map[string]struct {
		in, want string
		err      bool
	}{
		"replaces":    {in: "a\n" + paramsBegin + "old\n" + paramsEnd + "b\n", want: "a\n" + paramsBegin + "NEW\n" + paramsEnd + "b\n"},
		"empty block": {in: paramsBegin + paramsEnd, want: paramsBegin + "NEW\n" + paramsEnd},
		"no markers":  {in: "a\n", err: true},
		"end first":   {in: paramsEnd + paramsBegin, err: true},
		"two begins":  {in: paramsBegin + paramsBegin + paramsEnd, err: true},
		"missing end": {in: paramsBegin + "x\n", err: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := SpliceParams([]byte(tc.in), "NEW\n")
			if tc.err {
				if err == nil {
					t.Fatalf("want an error, got %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
