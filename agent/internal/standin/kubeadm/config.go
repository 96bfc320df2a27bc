package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstraptokenv1 "k8s.io/kubernetes/cmd/kubeadm/app/apis/bootstraptoken/v1"
	"k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/onekube/onekube/agent/internal/standin/env"
)

const groupV1Beta4 = "kubeadm.k8s.io/v1beta4"

// removedAPIs are the kubeadm config API versions kubeadm v1.37 refuses,
// with the last kubeadm that read each (cmd/kubeadm/app/util/config/
// common.go, oldKnownAPIVersions). The stand-in is built against 1.37's
// types, which no longer hold v1beta3, so it refuses it whatever version it
// reports.
var removedAPIs = map[string]string{
	"kubeadm.k8s.io/v1alpha1": "v1.11",
	"kubeadm.k8s.io/v1alpha2": "v1.12",
	"kubeadm.k8s.io/v1alpha3": "v1.14",
	"kubeadm.k8s.io/v1beta1":  "v1.15",
	"kubeadm.k8s.io/v1beta2":  "v1.22",
	"kubeadm.k8s.io/v1beta3":  "v1.36",
}

// config is what a file held, converted from whichever API version it used.
type config struct {
	apiVersion string
	init       *initView
	cluster    *clusterView
	join       *joinView
}

type initView struct {
	tokens     []bootstraptokenv1.BootstrapToken
	nodeName   string
	nodeIP     string // kubelet node-ip
	nodeLabels string // kubelet node-labels, k=v,k2=v2
	taints     []corev1.Taint
	advertise  string
	bindPort   int32
	certKey    string
	criSocket  string
	skipPhases []string
	// ignore is nodeRegistration.ignorePreflightErrors, which kubeadm
	// adds to --ignore-preflight-errors.
	ignore []string
}

type clusterView struct {
	kubernetesVersion, controlPlaneEndpoint string
	podSubnet, serviceSubnet                string
	encryptionAlgorithm                     string
	certificatesDir                         string
}

type joinView struct {
	nodeName, nodeIP string
	nodeLabels       string
	taints           []corev1.Taint
	token, tlsToken  string
	endpoint         string
	hashes           []string
	unsafeSkipCA     bool
	fileDiscovery    bool
	controlPlane     bool
	cpAdvertise      string
	cpBindPort       int32
	cpCertKey        string
	ignore           []string
	// discoveryTimeout bounds discovery's retries (0: kubeadm's 5 min).
	discoveryTimeout time.Duration
}

// readConfig reads and strictly decodes a kubeadm config file.
func readConfig(path string) (*config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("unable to read config from %q: %w", path, err)
	}
	c, err := decodeConfig(b)
	if err != nil {
		return nil, fmt.Errorf("unable to decode config from %q: %w", path, err)
	}
	return c, nil
}

// decodeConfig decodes every document with kubeadm's type for its
// apiVersion and kind, refusing unknown fields as kubeadm does.
func decodeConfig(b []byte) (*config, error) {
	c := &config{}
	seen := map[string]bool{}
	for _, doc := range env.SplitDocuments(b) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("invalid YAML document: %w", err)
		}
		if tm.APIVersion == "" || tm.Kind == "" {
			return nil, fmt.Errorf("invalid configuration for GroupVersionKind %s, Kind=%s: kind and apiVersion is mandatory information that must be specified", tm.APIVersion, tm.Kind)
		}
		gvk := tm.APIVersion + ", Kind=" + tm.Kind
		if seen[gvk] {
			return nil, fmt.Errorf("invalid configuration: GroupVersionKind %s is specified twice in YAML", gvk)
		}
		seen[gvk] = true
		if !strings.HasPrefix(tm.APIVersion, "kubeadm.k8s.io/") {
			// Component configs (KubeletConfiguration, KubeProxyConfiguration)
			// are accepted unchecked: onekube does not render them.
			continue
		}
		if use, ok := removedAPIs[tm.APIVersion]; ok {
			return nil, fmt.Errorf("your configuration file uses an old API spec: %q (kind: %q). Please use kubeadm %s instead and run 'kubeadm config migrate --old-config old-config-file --new-config new-config-file', which will write the new, similar spec using a newer API version.", tm.APIVersion, tm.Kind, use)
		}
		if tm.APIVersion != groupV1Beta4 {
			return nil, fmt.Errorf("your configuration file uses an unknown API spec: %q; this kubeadm reads %s", tm.APIVersion, groupV1Beta4)
		}
		c.apiVersion = tm.APIVersion
		if err := c.decode4(tm.Kind, doc); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// strict decodes doc into v as Kubernetes' serializer does: field names match
// case-sensitively, and unknown or duplicate fields are errors. (yaml's own
// UnmarshalStrict would accept "apiServerEndPoint".)
func strict(kind string, doc []byte, v any) error {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return fmt.Errorf("%s: strict decoding error: %w", kind, err)
	}
	strictErrs, err := sigsjson.UnmarshalStrict(js, v, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	if len(strictErrs) > 0 {
		msgs := make([]string, len(strictErrs))
		for i, e := range strictErrs {
			msgs[i] = e.Error()
		}
		return fmt.Errorf("%s: strict decoding error: %s", kind, strings.Join(msgs, ", "))
	}
	return nil
}

func (c *config) decode4(kind string, doc []byte) error {
	switch kind {
	case "InitConfiguration":
		var v v1beta4.InitConfiguration
		if err := strict(kind, doc, &v); err != nil {
			return err
		}
		c.init = &initView{
			tokens: v.BootstrapTokens, nodeName: v.NodeRegistration.Name, taints: v.NodeRegistration.Taints,
			nodeIP:     arg4(v.NodeRegistration.KubeletExtraArgs, "node-ip"),
			nodeLabels: arg4(v.NodeRegistration.KubeletExtraArgs, "node-labels"),
			advertise:  v.LocalAPIEndpoint.AdvertiseAddress, bindPort: v.LocalAPIEndpoint.BindPort,
			certKey: v.CertificateKey, criSocket: v.NodeRegistration.CRISocket, skipPhases: v.SkipPhases,
			ignore: v.NodeRegistration.IgnorePreflightErrors,
		}
	case "ClusterConfiguration":
		var v v1beta4.ClusterConfiguration
		if err := strict(kind, doc, &v); err != nil {
			return err
		}
		c.cluster = &clusterView{
			kubernetesVersion: v.KubernetesVersion, controlPlaneEndpoint: v.ControlPlaneEndpoint,
			podSubnet: v.Networking.PodSubnet, serviceSubnet: v.Networking.ServiceSubnet,
			encryptionAlgorithm: string(v.EncryptionAlgorithm), certificatesDir: v.CertificatesDir,
		}
	case "JoinConfiguration":
		var v v1beta4.JoinConfiguration
		if err := strict(kind, doc, &v); err != nil {
			return err
		}
		j := &joinView{
			nodeName: v.NodeRegistration.Name, taints: v.NodeRegistration.Taints,
			nodeIP:        arg4(v.NodeRegistration.KubeletExtraArgs, "node-ip"),
			nodeLabels:    arg4(v.NodeRegistration.KubeletExtraArgs, "node-labels"),
			tlsToken:      v.Discovery.TLSBootstrapToken,
			fileDiscovery: v.Discovery.File != nil,
			ignore:        v.NodeRegistration.IgnorePreflightErrors,
		}
		if v.Timeouts != nil && v.Timeouts.Discovery != nil {
			j.discoveryTimeout = v.Timeouts.Discovery.Duration
		}
		if bt := v.Discovery.BootstrapToken; bt != nil {
			j.token, j.endpoint, j.hashes, j.unsafeSkipCA = bt.Token, bt.APIServerEndpoint, bt.CACertHashes, bt.UnsafeSkipCAVerification
		}
		if cp := v.ControlPlane; cp != nil {
			j.controlPlane, j.cpAdvertise, j.cpBindPort, j.cpCertKey = true, cp.LocalAPIEndpoint.AdvertiseAddress, cp.LocalAPIEndpoint.BindPort, cp.CertificateKey
		}
		c.join = j
	case "ResetConfiguration", "UpgradeConfiguration":
		var v map[string]any // accepted, unused by the stand-in
		return yaml.Unmarshal(doc, &v)
	default:
		return fmt.Errorf("no kind %q is registered for version %q", kind, groupV1Beta4)
	}
	return nil
}

// arg4 returns the last value of a v1beta4 extra argument (kubeadm lets a
// later one win).
func arg4(args []v1beta4.Arg, name string) string {
	v := ""
	for _, a := range args {
		if a.Name == name {
			v = a.Value
		}
	}
	return v
}
