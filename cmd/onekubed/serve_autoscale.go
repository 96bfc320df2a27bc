package main

import (
	"log/slog"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/autoscale"
	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/serve"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
)

// autoscaleFlags tune the autoscale loop (the cluster-autoscaler's
// defaults otherwise).
type autoscaleFlags struct {
	threshold    float64
	unneededTime time.Duration
	allowOldest  bool
	every        time.Duration // hidden: the bed shortens it
}

// autoscaleLoop is the autoscale loop when ONEAPP_K8S_AUTOSCALE in this
// master's own CONTEXT turns it on, else nil. Only the CONTEXT counts: it
// is the owner's, while any VM of the service can write USER_TEMPLATE keys
// (docs/trust.md). A value that does not parse leaves autoscaling off,
// loudly, rather than scaling on a guess.
func autoscaleLoop(vars vmcontext.Vars, f autoscaleFlags, og gate.OneGate, cs kubernetes.Interface, clock system.Clock, log *slog.Logger) *serve.Autoscale {
	b, on, err := autoscale.ParseBounds(vars.Get(vmcontext.KeyAutoscale))
	if err != nil {
		log.Error(vmcontext.KeyAutoscale+" does not read; autoscaling stays off", "error", err)
		return nil
	}
	if !on {
		return nil
	}
	scaler, ok := gate.Scaler(og)
	if !ok {
		log.Error("the OneGate client cannot scale roles; autoscaling stays off")
		return nil
	}
	a := &serve.Autoscale{OneGate: og, Scaler: scaler, Client: cs, Drainer: serve.EvictionDrainer{Client: cs},
		Clock: clock, Log: log, Bounds: b, Role: vmcontext.DefaultWorkerRole,
		Threshold: f.threshold, UnneededTime: f.unneededTime, AllowOldest: f.allowOldest, Every: f.every}
	a.VMTemplate = workerTemplate(vars, log)
	if act, ok := gate.ActionsOf(og); ok {
		a.Actions = act
	} else {
		log.Warn("the OneGate client has no VM actions; autoscaling only scales up")
	}
	log.Info("autoscaling the worker role", "min", b.Min, "max", b.Max)
	return a
}

// workerTemplate is the worker role's VM size from KeyWorkerTemplate in
// this master's own CONTEXT (flow renders it there from the worker role;
// OneGate cannot write CONTEXT: docs/trust.md), the autoscaler's template
// when the role has no Node to copy. Absent or unreadable, scaling from
// zero workers stays off, loudly for a bad value, and the loop copies a
// worker Node as before.
func workerTemplate(vars vmcontext.Vars, log *slog.Logger) func() (autoscale.WorkerSize, bool) {
	size, ok, err := autoscale.ParseWorkerSize(vars.Get(vmcontext.KeyWorkerTemplate))
	switch {
	case err != nil:
		log.Error(vmcontext.KeyWorkerTemplate+" does not read; no scaling from zero workers", "error", err)
		return nil
	case !ok:
		log.Warn(vmcontext.KeyWorkerTemplate + " is not set; no scaling from zero workers")
		return nil
	}
	log.Info("worker template for scaling from zero", "template", size.String())
	return func() (autoscale.WorkerSize, bool) { return size, true }
}
