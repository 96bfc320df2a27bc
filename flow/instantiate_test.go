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
	}
}
