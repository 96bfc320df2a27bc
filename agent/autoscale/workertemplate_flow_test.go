package autoscale

import (
	"encoding/json"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow"
)

// What flow renders into the masters' CONTEXT is what the autoscaler
// reads: the worker role's VCPU and MEMORY.
func TestWorkerSizeFromFlow(t *testing.T) {
	t.Parallel()
	s := flow.DefaultSpec()
	s.Worker.VCPU, s.Worker.MemoryMB = 3, 5120
	doc, err := flow.RenderService(s, flow.Version7)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Roles []struct {
			Name             string `json:"name"`
			TemplateContents struct {
				Context map[string]string `json:"CONTEXT"`
			} `json:"template_contents"`
		} `json:"roles"`
	}
	if err := json.Unmarshal(doc, &st); err != nil {
		t.Fatal(err)
	}
	v := st.Roles[0].TemplateContents.Context[vmcontext.KeyWorkerTemplate]
	w, ok, err := ParseWorkerSize(v)
	if err != nil || !ok || w.VCPU != 3 || w.MemoryMB != 5120 {
		t.Errorf("ParseWorkerSize(%q) = %+v, %v, %v", v, w, ok, err)
	}
}
