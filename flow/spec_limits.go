package flow

import (
	"fmt"
	"math"
)

// Upper bounds of the spec's counts and sizes. They are far above any real
// cluster and far below what breaks arithmetic or a server: a spec asking
// for 9 223 372 036 854 775 807 workers or 10^13 MB of memory is a typo.
const (
	// MaxMasters: etcd is not run with more than 7 members.
	MaxMasters = 7
	// MaxNodes is the largest cluster Kubernetes supports (5 000 nodes).
	MaxNodes = 5000
	// MaxCPU and MaxVCPU bound a VM's CPU share and virtual CPUs.
	MaxCPU  = 1024
	MaxVCPU = 1024
	// MinCPU is the smallest CPU share oned accounts for (checkCPU).
	MinCPU = 0.01
	// MaxMemoryMB is 16 TiB, MaxDiskMB 64 TiB.
	MaxMemoryMB = 16 << 20
	MaxDiskMB   = 64 << 20
	// MaxSeconds bounds cooldowns and policy periods: a week.
	MaxSeconds = 7 * 24 * 3600
	// MaxPeriodNumber bounds how many periods a policy waits.
	MaxPeriodNumber = 1000
	// MaxPolicies bounds each role's elasticity and scheduled policies.
	MaxPolicies = 32
	// MaxUserInputs bounds the spec's extra user inputs.
	MaxUserInputs = 100
	// MaxText bounds descriptions and user input fields.
	MaxText = 1024
	// MaxID is the largest OpenNebula object ID (oned IDs are C ints).
	MaxID = math.MaxInt32
	// MaxSpecSize bounds a spec file.
	MaxSpecSize = 1 << 20
)

// checkLimits reports every count and size above its bound, by field path.
func checkLimits(ps *problems, s Spec) {
	over := func(path string, v, limit int, unit string) {
		if v > limit {
			ps.errorf(path, "%d%s is above the limit of %d%s", v, unit, limit, unit)
		}
	}
	for _, r := range []struct {
		name  string
		role  Role
		nodes int
	}{{RoleMaster, s.Master, MaxMasters}, {RoleWorker, s.Worker, MaxNodes}} {
		role := r.role
		over(r.name+".count", role.count(), r.nodes, " VMs")
		if role.Min != nil {
			over(r.name+".min", *role.Min, r.nodes, " VMs")
		}
		if role.Max != nil {
			over(r.name+".max", *role.Max, r.nodes, " VMs")
		}
		if role.TemplateID != nil {
			over(r.name+".templateID", *role.TemplateID, MaxID, "")
		}
		if role.CPU > MaxCPU {
			ps.errorf(r.name+".cpu", "%g is above the limit of %d", role.CPU, MaxCPU)
		}
		over(r.name+".vcpu", role.VCPU, MaxVCPU, "")
		over(r.name+".memoryMB", role.MemoryMB, MaxMemoryMB, " MB")
		over(r.name+".disk.sizeMB", role.Disk.SizeMB, MaxDiskMB, " MB")
		if role.Disk.ImageID != nil {
			over(r.name+".disk.imageID", *role.Disk.ImageID, MaxID, "")
		}
		if role.Cooldown != nil {
			over(r.name+".cooldown", *role.Cooldown, MaxSeconds, " s")
		}
		checkPolicyLimits(ps, r.name, role)
	}
	if n := s.Master.MaxVMs(RoleMaster) + s.Worker.MaxVMs(RoleWorker); n > MaxNodes {
		ps.errorf("worker.max", "masters and workers may reach %d VMs, above the %d nodes Kubernetes supports", n, MaxNodes)
	}
	if s.Network.ID != nil {
		over("network.id", *s.Network.ID, MaxID, "")
	}
	if len(s.UserInputs) > MaxUserInputs {
		ps.errorf("userInputs", "%d inputs: at most %d", len(s.UserInputs), MaxUserInputs)
	}
	for i, u := range s.UserInputs {
		for _, f := range []struct{ name, v string }{{"description", u.Description}, {"params", u.Params}, {"default", u.Default}} {
			if len(f.v) > MaxText {
				ps.errorf(fmt.Sprintf("userInputs[%d].%s", i, f.name), "%d characters: at most %d", len(f.v), MaxText)
			}
		}
	}
	for _, f := range []struct{ path, v string }{
		{"metadata.description", s.Metadata.Description},
		{"network.description", s.Network.Description},
	} {
		if len(f.v) > MaxText {
			ps.errorf(f.path, "%d characters: at most %d", len(f.v), MaxText)
		}
	}
}

func checkPolicyLimits(ps *problems, role string, r Role) {
	for _, p := range []struct {
		key string
		n   int
	}{{"elasticityPolicies", len(r.ElasticityPolicies)}, {"scheduledPolicies", len(r.ScheduledPolicies)}} {
		if p.n > MaxPolicies {
			ps.errorf(role+"."+p.key, "%d policies: at most %d", p.n, MaxPolicies)
		}
	}
	adjust := func(path string, adj int, step *int) {
		if adj > MaxNodes || adj < -MaxNodes {
			ps.errorf(path+".adjust", "%d is beyond ±%d", adj, MaxNodes)
		}
		if step != nil && *step > MaxNodes {
			ps.errorf(path+".minAdjustStep", "%d is above the limit of %d", *step, MaxNodes)
		}
	}
	for i, p := range r.ElasticityPolicies {
		path := fmt.Sprintf("%s.elasticityPolicies[%d]", role, i)
		adjust(path, p.Adjust, p.MinAdjustStep)
		for _, f := range []struct {
			key   string
			v     *int
			limit int
		}{{"periodNumber", p.PeriodNumber, MaxPeriodNumber}, {"period", p.Period, MaxSeconds}, {"cooldown", p.Cooldown, MaxSeconds}} {
			if f.v != nil && *f.v > f.limit {
				ps.errorf(path+"."+f.key, "%d is above the limit of %d", *f.v, f.limit)
			}
		}
		if len(p.Expression) > MaxText {
			ps.errorf(path+".expression", "%d characters: at most %d", len(p.Expression), MaxText)
		}
	}
	for i, p := range r.ScheduledPolicies {
		adjust(fmt.Sprintf("%s.scheduledPolicies[%d]", role, i), p.Adjust, p.MinAdjustStep)
	}
}
