package simcluster

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/onekube/onekube/context/onegatesim"
	"github.com/onekube/onekube/flow"
)

// Template renders flow's default cluster with the given worker count and
// deployment ("straight" or "none") for OneFlow 7, and the instantiate
// merge document a user would send: every user input at its default and
// the node network picked.
func Template(workers int, deployment string) (tmpl, merge []byte, err error) {
	return renderTemplate(flow.DefaultSpec(), workers, 0, deployment)
}

// TemplateMax is Template with room to scale the workers up to maxWorkers.
func TemplateMax(workers, maxWorkers int, deployment string) (tmpl, merge []byte, err error) {
	return renderTemplate(flow.DefaultSpec(), workers, maxWorkers, deployment)
}

// renderTemplate renders spec with the worker count, and max_vms raised to
// hold it and maxWorkers (unset, max_vms is flow's own default: room to
// scale up).
func renderTemplate(spec flow.Spec, workers, maxWorkers int, deployment string) (tmpl, merge []byte, err error) {
	spec.Worker.Count = &workers
	if m := max(workers, maxWorkers, 1); spec.Worker.Max != nil && *spec.Worker.Max < m || maxWorkers > 0 && spec.Worker.Max == nil {
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

// Template IDs of the role VM templates TemplateWithContexts renders.
const (
	MasterTemplateID = 11
	WorkerTemplateID = 12
)

// TemplateWithContexts is Template with each role on its own VM template,
// as `onekube-flow create` registers them, and those templates' CONTEXT
// for onegatesim.Options.TemplateContexts: the VMs then see what oned
// would give them (ROLE_NAME, and a straight worker's ONEKUBE_MASTER_VM_ID).
func TemplateWithContexts(workers int, deployment string) (tmpl, merge []byte, contexts map[int]map[string]string, err error) {
	spec := flow.DefaultSpec()
	master, worker := MasterTemplateID, WorkerTemplateID
	spec.Master.TemplateID, spec.Worker.TemplateID = &master, &worker
	contexts = map[int]map[string]string{}
	for id, role := range map[int]string{master: flow.RoleMaster, worker: flow.RoleWorker} {
		s := spec
		s.Service.Deployment = deployment
		text, err := flow.RenderVMTemplate(s, role)
		if err != nil {
			return nil, nil, nil, err
		}
		if contexts[id], err = onegatesim.TemplateContext(text); err != nil {
			return nil, nil, nil, fmt.Errorf("the %s VM template: %w", role, err)
		}
	}
	tmpl, merge, err = renderTemplate(spec, workers, 0, deployment)
	return tmpl, merge, contexts, err
}

// withCooldown sets every role's cooldown to d, rounded up to whole
// seconds (negative: none). onegatesim.Options.Cooldown only replaces
// OneFlow's default for roles that set none, and flow's roles set their
// own (flow.DefaultCooldown), so a test that shortens the wall-clock
// cooldown does it in the template.
func withCooldown(tmpl []byte, d time.Duration) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(tmpl, &doc); err != nil {
		return nil, fmt.Errorf("reading the service template: %w", err)
	}
	secs := int(math.Ceil(max(d, 0).Seconds()))
	roles, _ := doc["roles"].([]any)
	for _, r := range roles {
		if role, ok := r.(map[string]any); ok {
			role["cooldown"] = secs
		}
	}
	return json.Marshal(doc)
}
