package register

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/onekube/onekube/flow"
)

// ErrExists: a template of that name exists and the caller did not say to
// replace or reuse it.
var ErrExists = errors.New("already exists")

// Options steer Create.
type Options struct {
	Version flow.OneFlowVersion
	// Replace updates existing templates of the same name in place.
	Replace bool
	// ReuseVMTemplates takes an existing VM template of the same name as
	// it is, without updating it.
	ReuseVMTemplates bool
}

// Action says what Create did with a template.
type Action string

// Actions.
const (
	Created Action = "created"
	Updated Action = "updated"
	Reused  Action = "reused" // existing, left as it was
	Given   Action = "given"  // the spec named its ID
)

// Outcome is one template Create dealt with.
type Outcome struct {
	Kind   string // "vm-template" or "service-template"
	Role   string // the role, for VM templates
	Name   string
	ID     int
	Action Action
}

func (o Outcome) String() string {
	s := o.Kind
	if o.Role != "" {
		s += " " + o.Role
	}
	return fmt.Sprintf("%s %d %s (%s)", s, o.ID, o.Action, o.Name)
}

// Registrar registers clusters.
type Registrar struct {
	VM   VMTemplates
	Flow ServiceTemplates
	// FlowUser is the OneFlow user when it differs from oned's
	// (ONEFLOW_USER); empty means the same user.
	FlowUser string
}

// vmPlan is what to do for one role's VM template.
type vmPlan struct {
	role, name, text string
	existing         *Document
}

// Create registers the role VM templates the spec does not name by ID, then
// the service template with those IDs. Everything is looked up before
// anything is written, so a refusal (an existing name without Replace)
// leaves OpenNebula untouched, and a re-run never makes duplicates. Only
// the caller's own templates are looked up: another user's template of the
// same name is neither updated nor used.
func (r Registrar) Create(ctx context.Context, spec flow.Spec, opts Options) ([]Outcome, error) {
	spec = spec.WithDefaults()
	if _, err := flow.RenderService(spec, opts.Version); err != nil {
		return nil, err
	}
	me, err := r.VM.Whoami(ctx)
	if err != nil {
		return nil, err
	}
	services, err := r.Flow.List(ctx)
	if err != nil {
		return nil, err
	}
	owns := ownedBy(me)
	if r.FlowUser != "" && r.FlowUser != me.Name {
		owns = ownedByName(r.FlowUser)
	}
	existingSvc, err := byName(mine(services, owns), spec.Metadata.Name, "service template")
	if err != nil {
		return nil, err
	}
	if existingSvc != nil && !opts.Replace {
		return nil, fmt.Errorf("%w: service template %q (ID %d); pass --replace to update it, or choose another --name",
			ErrExists, spec.Metadata.Name, existingSvc.ID)
	}
	plans, err := r.planVMTemplates(ctx, spec, opts, me)
	if err != nil {
		return nil, err
	}

	var out []Outcome
	done := map[string]int{} // VM template name -> ID, for roles sharing one
	for _, p := range plans {
		role, _ := spec.Role(p.role)
		o := Outcome{Kind: "vm-template", Role: p.role, Name: p.name}
		switch id, ok := done[p.name]; {
		case ok:
			o.ID, o.Action = id, Reused
		case p.existing == nil:
			if o.ID, err = r.VM.Allocate(ctx, p.text); err != nil {
				return out, err
			}
			o.Action = Created
		case opts.Replace:
			if err := r.VM.Replace(ctx, p.existing.ID, p.text); err != nil {
				return out, err
			}
			o.ID, o.Action = p.existing.ID, Updated
		default:
			o.ID, o.Action = p.existing.ID, Reused
		}
		done[p.name] = o.ID
		role.TemplateID = &o.ID
		out = append(out, o)
	}
	for _, name := range []string{flow.RoleMaster, flow.RoleWorker} {
		if role, _ := spec.Role(name); role.TemplateID != nil && !hasRole(out, name) {
			out = append(out, Outcome{Kind: "vm-template", Role: name, Name: "", ID: *role.TemplateID, Action: Given})
		}
	}

	body, err := flow.RenderService(spec, opts.Version)
	if err != nil {
		return out, err
	}
	svc := Outcome{Kind: "service-template", Name: spec.Metadata.Name}
	if existingSvc == nil {
		if svc.ID, err = r.Flow.Create(ctx, body); err != nil {
			return out, err
		}
		svc.Action = Created
	} else {
		if err := r.Flow.Update(ctx, existingSvc.ID, body); err != nil {
			return out, err
		}
		svc.ID, svc.Action = existingSvc.ID, Updated
	}
	return append(out, svc), nil
}

func (r Registrar) planVMTemplates(ctx context.Context, spec flow.Spec, opts Options, me Owner) ([]vmPlan, error) {
	var plans []vmPlan
	for _, name := range []string{flow.RoleMaster, flow.RoleWorker} {
		if role, _ := spec.Role(name); role.TemplateID == nil {
			text, err := flow.RenderVMTemplate(spec, name)
			if err != nil {
				return nil, err
			}
			plans = append(plans, vmPlan{role: name, name: spec.TemplateName(name), text: text})
		}
	}
	if len(plans) == 0 {
		return nil, nil
	}
	templates, err := r.VM.List(ctx)
	if err != nil {
		return nil, err
	}
	// List asks oned for the caller's own templates; filtering again keeps
	// that true should a server (or a proxy) answer with the whole pool.
	templates = mine(templates, ownedBy(me))
	var refused []string
	for i, p := range plans {
		existing, err := byName(templates, p.name, "VM template")
		if err != nil {
			return nil, err
		}
		plans[i].existing = existing
		if existing != nil && !opts.Replace && !opts.ReuseVMTemplates {
			refused = append(refused, fmt.Sprintf("VM template %q (ID %d, role %s)", p.name, existing.ID, p.role))
		}
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("%w: %s; pass --replace to update, --reuse-vm-templates to use as is, or name the templates by ID (--master-template-id, --worker-template-id)",
			ErrExists, strings.Join(refused, "; "))
	}
	return plans, nil
}

func byName(docs []Document, name, what string) (*Document, error) {
	var found *Document
	for i := range docs {
		if docs[i].Name != name {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("%d and %d are both %ss named %q: rename one", found.ID, docs[i].ID, what, name)
		}
		found = &docs[i]
	}
	return found, nil
}

func hasRole(out []Outcome, role string) bool {
	for _, o := range out {
		if o.Role == role {
			return true
		}
	}
	return false
}
