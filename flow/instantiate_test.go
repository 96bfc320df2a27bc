package flow

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestRenderInstantiate(t *testing.T) {
	t.Parallel()
	spec := DefaultSpec()
	if _, err := RenderInstantiate(spec, Version7); !errors.Is(err, ErrSpec) {
		t.Errorf("no network: %v", err)
	}
	spec.Network.ID = ptr(4)
	spec.Worker.Count = ptr(5)
	for _, v := range []OneFlowVersion{Version6, Version7} {
		b, err := RenderInstantiate(spec, v)
		if err != nil {
			t.Fatal(err)
		}
		var doc InstantiateDoc
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		values := doc.UserInputsValues
		if v == Version6 {
			values = doc.CustomAttrsValues
		}
		if len(values) != len(UserInputs(spec)) || values["ONEAPP_K8S_PORT"] != "6443" {
			t.Errorf("%v: values %v", v, values)
		}
		if doc.NetworksValues[0]["Private"].ID != "4" || doc.Roles[1] != (InstantiateRole{"worker", 5}) {
			t.Errorf("%v: %s", v, b)
		}
		// 6.10 merges roles by array position (validator.rb deep_merge,
		// release-6.10.5): the merge file must list every role of the
		// service template, in its order.
		svc, err := RenderService(spec, v)
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Roles []struct{ Name string } `json:"roles"`
		}
		if err := json.Unmarshal(svc, &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Roles) != len(doc.Roles) {
			t.Fatalf("%v: %d roles in the template, %d in the merge file", v, len(st.Roles), len(doc.Roles))
		}
		for i := range st.Roles {
			if st.Roles[i].Name != doc.Roles[i].Name {
				t.Errorf("%v: merge role %d is %q, the template's is %q", v, i, doc.Roles[i].Name, st.Roles[i].Name)
			}
		}
	}
}
