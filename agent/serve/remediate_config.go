package serve

import (
	"fmt"
	"strings"
	"time"
)

// RemediateConfig bounds the remediation loop (remediate.go). The
// defaults are CAPI's MachineHealthCheck and OneKS's (reference
// day2-upgrades-healing-scaling.md §4): Ready False or Unknown for 5 m,
// no Node 15 m after the VM ran, at most 40 % of the workers and one
// master unhealthy.
type RemediateConfig struct {
	// UnhealthyAfter is how long a Node's Ready may be False or Unknown.
	UnhealthyAfter time.Duration
	// StartupTimeout is how long a running VM may have no Node.
	StartupTimeout time.Duration
	// MaxUnhealthyWorkersPct: more unhealthy workers than this share (in
	// percent of the worker VMs) stops worker remediation.
	MaxUnhealthyWorkersPct int
	// MaxUnhealthyMasters: more unhealthy masters than this stops master
	// remediation.
	MaxUnhealthyMasters int
	// ActionTimeout is how long a poweroff or terminate may take to show
	// in the VM's state before the ladder moves on or sends it again.
	ActionTimeout time.Duration
	// RecoverWait is how long a resumed VM has to become healthy before it
	// is replaced.
	RecoverWait time.Duration
	// ScaleRetry is the wait after OneFlow refused the cardinality (its
	// default role cooldown, oneflow-server.conf :default_cooldown: 300).
	ScaleRetry time.Duration
	// DrainTimeout bounds the drain before a replacement.
	DrainTimeout time.Duration
	// Every is the tick (one GET /service?extended each).
	Every time.Duration
}

// Defaults of RemediateConfig.
var DefaultRemediateConfig = RemediateConfig{
	UnhealthyAfter:         5 * time.Minute,
	StartupTimeout:         15 * time.Minute,
	MaxUnhealthyWorkersPct: 40,
	MaxUnhealthyMasters:    1,
	ActionTimeout:          5 * time.Minute,
	RecoverWait:            10 * time.Minute,
	ScaleRetry:             5 * time.Minute,
	DrainTimeout:           2 * time.Minute,
	Every:                  time.Minute,
}

func (c RemediateConfig) withDefaults() RemediateConfig {
	d := DefaultRemediateConfig
	set := func(v *time.Duration, def time.Duration) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&c.UnhealthyAfter, d.UnhealthyAfter)
	set(&c.StartupTimeout, d.StartupTimeout)
	set(&c.ActionTimeout, d.ActionTimeout)
	set(&c.RecoverWait, d.RecoverWait)
	set(&c.ScaleRetry, d.ScaleRetry)
	set(&c.DrainTimeout, d.DrainTimeout)
	set(&c.Every, d.Every)
	if c.MaxUnhealthyWorkersPct <= 0 || c.MaxUnhealthyWorkersPct > 100 {
		c.MaxUnhealthyWorkersPct = d.MaxUnhealthyWorkersPct
	}
	if c.MaxUnhealthyMasters <= 0 {
		c.MaxUnhealthyMasters = d.MaxUnhealthyMasters
	}
	return c
}

// ParseRemediationSwitch reads ONEAPP_K8S_REMEDIATION from the masters'
// CONTEXT: "on" (or empty: the default) or "off", any case. Anything else
// is an error; the caller then leaves remediation off, since a switch it
// cannot read may have been meant to stop it.
func ParseRemediationSwitch(v string) (on bool, err error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "on", "yes":
		return true, nil
	case "off", "no":
		return false, nil
	}
	return false, fmt.Errorf("%q is neither on nor off", bounded(v, 40))
}

// bounded cuts s for an error message.
func bounded(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
