package flow

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// InstantiateDoc is the file for `oneflow-template instantiate ID FILE`: the
// CLI sends it as the merge_template. OneFlow 7 wants a value for every user
// input, optional ones included, so all are listed with the spec's values.
type InstantiateDoc struct {
	Name              string                    `json:"name"`
	UserInputsValues  map[string]string         `json:"user_inputs_values,omitempty"`
	CustomAttrsValues map[string]string         `json:"custom_attrs_values,omitempty"`
	NetworksValues    []map[string]NetworkValue `json:"networks_values"`
	Roles             []InstantiateRole         `json:"roles"`
}

// InstantiateRole overrides a role's cardinality; roles merge by name.
type InstantiateRole struct {
	Name        string `json:"name"`
	Cardinality int    `json:"cardinality"`
}

// RenderInstantiate renders the instantiate (merge) file for spec. The
// network must be known (Network.ID): without networks_values the server
// derives a null network from "id:" (oneflow.md §3).
func RenderInstantiate(spec Spec, v OneFlowVersion) ([]byte, error) {
	if err := v.check(); err != nil {
		return nil, err
	}
	applyDefaults(&spec)
	if err := specError(spec); err != nil {
		return nil, err
	}
	if spec.Network.ID == nil {
		return nil, fmt.Errorf("%w: network.id: the instantiate file needs the virtual network ID for %s", ErrSpec, spec.Network.Name)
	}
	values := map[string]string{}
	for _, u := range UserInputs(spec) {
		values[u.Name] = u.Default
	}
	doc := InstantiateDoc{
		Name:           spec.Metadata.Name,
		NetworksValues: networksValues(spec.Network),
		Roles: []InstantiateRole{
			{RoleMaster, spec.Master.count()},
			{RoleWorker, spec.Worker.count()},
		},
	}
	if v == Version6 {
		doc.CustomAttrsValues = values
	} else {
		doc.UserInputsValues = values
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encoding the instantiate file: %w", err)
	}
	return b.Bytes(), nil
}
