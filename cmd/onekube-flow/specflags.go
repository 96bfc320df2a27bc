package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/onekube/onekube/flow"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// specFlags are the flags that build or override a cluster spec; only flags
// given on the command line override the file.
type specFlags struct {
	file, name, description, deployment           string
	masters, mastersMin, mastersMax               int
	workers, workersMin, workersMax               int
	masterTemplateID, workerTemplateID            int
	masterTemplateName, workerTemplateName        string
	masterCPU, workerCPU                          float64
	masterVCPU, workerVCPU                        int
	masterMemory, workerMemory                    int
	masterDisk, workerDisk                        int
	masterImage, workerImage                      string
	masterImageID, workerImageID                  int
	network, networkCIDR                          string
	networkID                                     int
	k8sVersion, podsNetwork, servicesNetwork, cni string
	apiPort                                       int
	apiAddress                                    string
	userInputs                                    []string
	cooldown                                      int
	autoscale                                     string
	masterSpread, workerSpread                    bool
}

func (f *specFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.file, "file", "f", "", "cluster spec file (YAML, apiVersion onekube.io/v1alpha1, kind Cluster); - reads stdin")
	fs.StringVar(&f.name, "name", "", "cluster and service template name")
	fs.StringVar(&f.description, "description", "", "service template description")
	fs.StringVar(&f.deployment, "deployment", "", "OneFlow deployment: straight (workers after the master is ready) or none")
	for _, r := range []struct {
		role                 string
		count, lo, hi, id    *int
		vcpu, mem, disk, img *int
		cpu                  *float64
		tname, image         *string
	}{
		{"master", &f.masters, &f.mastersMin, &f.mastersMax, &f.masterTemplateID, &f.masterVCPU, &f.masterMemory, &f.masterDisk, &f.masterImageID, &f.masterCPU, &f.masterTemplateName, &f.masterImage},
		{"worker", &f.workers, &f.workersMin, &f.workersMax, &f.workerTemplateID, &f.workerVCPU, &f.workerMemory, &f.workerDisk, &f.workerImageID, &f.workerCPU, &f.workerTemplateName, &f.workerImage},
	} {
		decimalInt(fs, r.count, r.role+"s", "number of "+r.role+" VMs (cardinality)")
		decimalInt(fs, r.lo, r.role+"s-min", r.role+" role min_vms")
		decimalInt(fs, r.hi, r.role+"s-max", r.role+" role max_vms")
		decimalInt(fs, r.id, r.role+"-template-id", "existing VM template ID for the "+r.role+" role")
		fs.StringVar(r.tname, r.role+"-template-name", "", "name of the "+r.role+" VM template to register (default <name>-"+r.role+")")
		decimalFloat(fs, r.cpu, r.role+"-cpu", r.role+" CPU (physical share, may be fractional)")
		decimalInt(fs, r.vcpu, r.role+"-vcpu", r.role+" virtual CPUs")
		decimalInt(fs, r.mem, r.role+"-memory", r.role+" memory in MB")
		decimalInt(fs, r.disk, r.role+"-disk-size", r.role+" disk size in MB (0: the image's size)")
		fs.StringVar(r.image, r.role+"-image", "", r.role+" disk image name")
		decimalInt(fs, r.img, r.role+"-image-id", r.role+" disk image ID")
	}
	decimalInt(fs, &f.cooldown, "cooldown", fmt.Sprintf("every role's OneFlow cooldown in seconds, the pause after each scale in which the service refuses another (default %d; OneFlow's own is 300)", flow.DefaultCooldown))
	fs.StringVar(&f.autoscale, "autoscale", "", "worker autoscaling bounds MIN:MAX, the default of "+flow.KeyAutoscale+" and the worker role's min_vms and max_vms (default off)")
	fs.BoolVar(&f.masterSpread, "master-anti-affinity", false, "place masters on different hosts (VM group role ANTI_AFFINED); default: on with more than one master, --master-anti-affinity=false opts out")
	fs.BoolVar(&f.workerSpread, "worker-anti-affinity", false, "place workers on different hosts (VM group role ANTI_AFFINED)")
	fs.StringVar(&f.network, "network", "", `OneFlow network input name the NICs use (default "Private")`)
	decimalInt(fs, &f.networkID, "network-id", "default virtual network ID for the nodes")
	fs.StringVar(&f.networkCIDR, "network-cidr", "", "the nodes' CIDR, checked against the pod and service networks")
	// Kept, hidden, so that an old script gets the reason rather than
	// "unknown flag": the image carries one Kubernetes release.
	fs.StringVar(&f.k8sVersion, "k8s-version", "", "refused: the appliance image carries one Kubernetes release")
	_ = fs.MarkHidden("k8s-version")
	fs.StringVar(&f.podsNetwork, "pods-network", "", "pod network CIDR (default 10.244.0.0/16)")
	fs.StringVar(&f.servicesNetwork, "services-network", "", "service network CIDR (default 10.96.0.0/12)")
	fs.StringVar(&f.cni, "cni", "", "CNI plugin: flannel, calico or none (default flannel)")
	decimalInt(fs, &f.apiPort, "api-port", "Kubernetes API server port (default 6443)")
	fs.StringVar(&f.apiAddress, "api-address", "", "NIC for Kubernetes traffic: a CIDR (e.g. 10.0.0.0/24) or a virtual network name (default: the first NIC)")
	fs.StringArrayVar(&f.userInputs, "user-input", nil, "extra user input NAME=M|type|description|params|default (repeatable)")
}

// spec reads the spec file (or starts from the defaults) and applies the
// flags the user gave.
func (f *specFlags) spec(cmd *cobra.Command, a *app) (flow.Spec, error) {
	s := flow.DefaultSpec()
	if f.file != "" {
		data, err := a.readInput(f.file)
		if err != nil {
			return s, fmt.Errorf("reading the spec: %w", err)
		}
		if s, err = flow.ParseSpec(data); err != nil {
			return s, fmt.Errorf("%s: %w", f.file, err)
		}
	}
	ch := cmd.Flags().Changed
	setS := func(flag string, dst *string, v string) {
		if ch(flag) {
			*dst = v
		}
	}
	setP := func(flag string, dst **int, v int) {
		if ch(flag) {
			*dst = &v
		}
	}
	setI := func(flag string, dst *int, v int) {
		if ch(flag) {
			*dst = v
		}
	}
	setS("name", &s.Metadata.Name, f.name)
	setS("description", &s.Metadata.Description, f.description)
	setS("deployment", &s.Service.Deployment, f.deployment)
	for _, r := range []struct {
		name                 string
		role                 *flow.Role
		count, lo, hi, id    int
		vcpu, mem, disk, img int
		cpu                  float64
		tname, image         string
	}{
		{"master", &s.Master, f.masters, f.mastersMin, f.mastersMax, f.masterTemplateID, f.masterVCPU, f.masterMemory, f.masterDisk, f.masterImageID, f.masterCPU, f.masterTemplateName, f.masterImage},
		{"worker", &s.Worker, f.workers, f.workersMin, f.workersMax, f.workerTemplateID, f.workerVCPU, f.workerMemory, f.workerDisk, f.workerImageID, f.workerCPU, f.workerTemplateName, f.workerImage},
	} {
		setP(r.name+"s", &r.role.Count, r.count)
		setP(r.name+"s-min", &r.role.Min, r.lo)
		setP(r.name+"s-max", &r.role.Max, r.hi)
		setP(r.name+"-template-id", &r.role.TemplateID, r.id)
		setS(r.name+"-template-name", &r.role.TemplateName, r.tname)
		if ch(r.name + "-cpu") {
			r.role.CPU = r.cpu
		}
		setI(r.name+"-vcpu", &r.role.VCPU, r.vcpu)
		setI(r.name+"-memory", &r.role.MemoryMB, r.mem)
		setI(r.name+"-disk-size", &r.role.Disk.SizeMB, r.disk)
		if ch(r.name + "-image") {
			r.role.Disk.Image, r.role.Disk.ImageID = r.image, nil
		}
		if ch(r.name + "-image-id") {
			r.role.Disk.Image, r.role.Disk.ImageID = "", &r.img
		}
	}
	if ch("cooldown") {
		s.Master.Cooldown, s.Worker.Cooldown = &f.cooldown, &f.cooldown
	}
	setS("autoscale", &s.Worker.Autoscale, f.autoscale)
	if ch("master-anti-affinity") {
		s.Master.AntiAffinity = &f.masterSpread
	}
	if ch("worker-anti-affinity") {
		s.Worker.AntiAffinity = &f.workerSpread
	}
	setS("network", &s.Network.Name, f.network)
	setP("network-id", &s.Network.ID, f.networkID)
	setS("network-cidr", &s.Network.CIDR, f.networkCIDR)
	setS("k8s-version", &s.Kubernetes.Version, f.k8sVersion)
	setS("pods-network", &s.Kubernetes.PodsNetwork, f.podsNetwork)
	setS("services-network", &s.Kubernetes.ServicesNetwork, f.servicesNetwork)
	setS("cni", &s.Kubernetes.CNI, f.cni)
	setI("api-port", &s.Kubernetes.Port, f.apiPort)
	setS("api-address", &s.Kubernetes.Address, f.apiAddress)
	for _, kv := range f.userInputs {
		name, def, ok := strings.Cut(kv, "=")
		if !ok {
			return s, usagef("--user-input %q: want NAME=M|type|description|params|default", kv)
		}
		u, _, err := flow.ParseUserInput(name, def)
		if err != nil {
			return s, usagef("--user-input %s: %v", name, err)
		}
		s.UserInputs = append(s.UserInputs, u)
	}
	return s.WithDefaults(), nil
}

// warnSpec prints the spec's warnings to stderr; its errors are left to the
// renderer, which refuses the spec with all of them.
func warnSpec(w io.Writer, s flow.Spec) {
	for _, p := range flow.CheckSpec(s) {
		if p.Severity == flow.Warning {
			fmt.Fprintln(w, p)
		}
	}
}

// versionFlag parses --oneflow.
func parseVersion(s string, auto bool) (flow.OneFlowVersion, error) {
	switch s {
	case "7":
		return flow.Version7, nil
	case "6":
		return flow.Version6, nil
	case "auto":
		if auto {
			return flow.VersionAuto, nil
		}
	}
	want := "6 or 7"
	if auto {
		want = "auto, 6 or 7"
	}
	return 0, usagef("--oneflow %q: want %s", s, want)
}
