package register

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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

// Outcome is one object Create dealt with.
type Outcome struct {
	Kind   string // "vm-group", "vm-template" or "service-template"
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
	// Groups registers the VM group of the roles that spread over hosts;
	// nil refuses a spec that has such roles.
	Groups VMGroups
	// FlowUser is the OneFlow user when it differs from oned's
	// (ONEFLOW_USER); empty means the same user.
	FlowUser string
}

// vmPlan is what to do for one role's VM template.
type vmPlan struct {
	role, name, text string
	existing         *Document
}

// Create registers the VM group of the roles that spread over hosts (if
// any), the role VM templates the spec does not name by ID, then the
// service template with those IDs. Everything is looked up before anything
// is written, so a refusal (an existing name without Replace) leaves
// OpenNebula untouched, and a re-run never makes duplicates. Only the
// caller's own objects are looked up: another user's of the same name is
// neither updated nor used. When a write fails, what this call created is
// deleted again, newest first (what it updated stays updated).
func (r Registrar) Create(ctx context.Context, spec flow.Spec, opts Options) (out []Outcome, err error) {
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
	group, err := r.planVMGroup(ctx, spec, me)
	if err != nil {
		return nil, err
	}

	defer func() {
		if err != nil {
			out, err = r.rollback(out, err)
		}
	}()
	if group != nil {
		o := Outcome{Kind: "vm-group", Name: group.name}
		if group.existing != nil {
			o.ID, o.Action = group.existing.ID, Reused
		} else {
			if o.ID, err = r.Groups.Allocate(ctx, group.text); err != nil {
				return out, err
			}
			o.Action = Created
		}
		out = append(out, o)
	}
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

// groupPlan is what to do for the VM group.
type groupPlan struct {
	name, text string
	existing   *Document
}

// planVMGroup finds the caller's VM group of the spec's name. An existing
// one is used as it is when every spreading role is in it ANTI_AFFINED:
// oned's one.vmgroup.update cannot change roles (VMGroup's
// post_update_template erases ROLE, release-7.4.0 and 6.10.5), so one
// that lacks them is refused, naming it.
func (r Registrar) planVMGroup(ctx context.Context, spec flow.Spec, me Owner) (*groupPlan, error) {
	text, err := flow.RenderVMGroup(spec)
	if err != nil || text == "" {
		return nil, err
	}
	p := &groupPlan{name: spec.VMGroupName(), text: text}
	if r.Groups == nil {
		return nil, fmt.Errorf("roles %s spread over hosts through VM group %q, and nothing here registers VM groups", strings.Join(spec.SpreadRoles(), ", "), p.name)
	}
	groups, err := r.Groups.List(ctx)
	if err != nil {
		return nil, err
	}
	var docs []Document
	policies := map[int]map[string]string{}
	for _, g := range groups {
		if g.UID == me.ID {
			docs = append(docs, g.Document)
			policies[g.ID] = g.Policies
		}
	}
	if p.existing, err = byName(docs, p.name, "VM group"); err != nil || p.existing == nil {
		return p, err
	}
	var missing []string
	for _, role := range spec.SpreadRoles() {
		if !strings.EqualFold(policies[p.existing.ID][role], flow.VMGroupRoleAntiAffined) {
			missing = append(missing, role)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: VM group %q (ID %d) has no %s role %s, and oned does not change a group's roles on update; delete it (onevmgroup delete %d) or choose another --name",
			ErrExists, p.name, p.existing.ID, flow.VMGroupRoleAntiAffined, strings.Join(missing, ", "), p.existing.ID)
	}
	return p, nil
}

// rollback deletes, newest first, what out says this call created, and
// returns the outcomes that remain with cause, plus what was undone or
// could not be.
func (r Registrar) rollback(out []Outcome, cause error) ([]Outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
	defer cancel()
	var kept []Outcome
	var undone, failed []string
	for i := len(out) - 1; i >= 0; i-- {
		o := out[i]
		if o.Action != Created {
			kept = append([]Outcome{o}, kept...)
			continue
		}
		var err error
		switch o.Kind {
		case "vm-group":
			err = r.Groups.Delete(ctx, o.ID)
		case "vm-template":
			err = r.VM.Delete(ctx, o.ID)
		default:
			kept = append([]Outcome{o}, kept...)
			continue
		}
		what := fmt.Sprintf("%s %d (%s)", o.Kind, o.ID, o.Name)
		if err != nil {
			failed = append(failed, what+": "+err.Error())
			kept = append([]Outcome{o}, kept...)
			continue
		}
		undone = append(undone, what)
	}
	switch {
	case len(failed) > 0:
		return kept, fmt.Errorf("%w; rolling back, could not delete %s", cause, strings.Join(failed, "; "))
	case len(undone) > 0:
		return kept, fmt.Errorf("%w; rolled back: deleted %s", cause, strings.Join(undone, ", "))
	}
	return kept, cause
}

// rollbackTimeout bounds the deletes of a rollback, which run after the
// caller's context may have expired (the failure may be that expiry).
const rollbackTimeout = 30 * time.Second

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
