package simcluster

import (
	"encoding/json"
	"fmt"

	"github.com/onekube/onekube/context/onegatesim"
	"github.com/onekube/onekube/flow"
)

// Template renders flow's default cluster with the given worker count and
// deployment ("straight" or "none") for OneFlow 7, and the instantiate
// merge document a user would send: every user input at its default and
// the node network picked.
func Template(workers int, deployment string) (tmpl, merge []byte, err error) {
	spec := flow.DefaultSpec()
	spec.Worker.Count = &workers
	if m := max(workers, 1); spec.Worker.Max == nil || *spec.Worker.Max < m {
		spec.Worker.Max = &m
	}
	if spec.Worker.Min != nil && *spec.Worker.Min > workers {
		spec.Worker.Min = &workers
	}
	spec.Service.Deployment = deployment
	tmpl, err = flow.RenderService(spec, flow.Version7)
	if err != nil {
		return nil, nil, fmt.Errorf("rendering the service template: %w", err)
	}
	inputs, err := onegatesim.InputDefaults(tmpl)
	if err != nil {
		return nil, nil, err
	}
	merge, err = json.Marshal(map[string]any{
		"user_inputs_values": inputs,
		"networks_values":    []map[string]any{{spec.Network.Name: map[string]string{"id": "0"}}},
	})
	return tmpl, merge, err
}
