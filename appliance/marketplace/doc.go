// Package marketplace generates the OpenNebula marketplace metadata of the
// onekube appliance (the VM image) and of its OneFlow service, one file per
// OneFlow data model, plus the ONE_SERVICE_PARAMS block of appliance.sh.
//
// Everything is derived from what onekube-flow renders (flow.RenderService,
// flow.RenderVMTemplate, flow.UserInputs on flow.DefaultSpec) and from the
// pins in appliance/versions.env, so the metadata cannot drift from flow/:
// the package's test compares the committed files with a fresh generation and
// `make marketplace` rewrites them.
package marketplace
