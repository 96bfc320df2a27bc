package kubeadm

import (
	"testing"

	"sigs.k8s.io/yaml"
)

// Every binding of the manifest names the group worker tokens carry, and
// nothing else: the YAML spells the group out, the Go constant renders it.
func TestWorkerJoinRBACBindsWorkerGroup(t *testing.T) {
	docs := WorkerJoinRBACDocuments()
	// No nodeclient auto-approval among them: serve's CSR approver judges
	// each worker's request (agent/serve/csrapprove.go).
	if len(docs) != 5 {
		t.Fatalf("%d documents, want 5", len(docs))
	}
	bindings := 0
	for i, doc := range docs {
		var o struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Subjects []struct {
				Kind string `json:"kind"`
				Name string `json:"name"`
			} `json:"subjects"`
		}
		if err := yaml.Unmarshal(doc, &o); err != nil {
			t.Fatalf("document %d: %v", i+1, err)
		}
		if o.Metadata.Name == "" {
			t.Errorf("document %d (%s) has no name", i+1, o.Kind)
		}
		for _, s := range o.Subjects {
			bindings++
			if s.Kind != "Group" || s.Name != WorkerTokenGroup {
				t.Errorf("%s %s binds %s %s, want Group %s", o.Kind, o.Metadata.Name, s.Kind, s.Name, WorkerTokenGroup)
			}
		}
	}
	if bindings != 3 {
		t.Errorf("%d subjects, want 3", bindings)
	}
}
