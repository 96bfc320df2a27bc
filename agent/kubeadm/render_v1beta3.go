package kubeadm

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstraptokenv1 "k8s.io/kubernetes/cmd/kubeadm/app/apis/bootstraptoken/v1"
	"k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta3"
)

// Renderers for kubeadm.k8s.io/v1beta3 (kubeadm 1.22 to 1.36). They mirror
// render_v1beta4.go; the differences are the type package and extra args as
// a map.

func typeMeta3(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: v1beta3.SchemeGroupVersion.String(), Kind: kind}
}

func initV1Beta3(c initConfig) []any {
	p := c.p
	ic := &v1beta3.InitConfiguration{
		TypeMeta:        typeMeta3("InitConfiguration"),
		BootstrapTokens: []bootstraptokenv1.BootstrapToken{bootstrapToken(p.Token, p.TokenTTL)},
		NodeRegistration: v1beta3.NodeRegistrationOptions{
			Name:                  p.NodeName,
			Taints:                taints(p.TaintControlPlane),
			IgnorePreflightErrors: p.IgnorePreflight,
			KubeletExtraArgs:      args3(kubeletArgs(p.AdvertiseAddress, p.NodeLabels, p.ProviderID)),
		},
		LocalAPIEndpoint: v1beta3.APIEndpoint{
			AdvertiseAddress: p.AdvertiseAddress.String(),
			BindPort:         int32Port(p.BindPort),
		},
		CertificateKey: p.CertificateKey.Reveal(),
	}
	cc := &v1beta3.ClusterConfiguration{
		TypeMeta:             typeMeta3("ClusterConfiguration"),
		KubernetesVersion:    c.k8sVersion,
		ControlPlaneEndpoint: p.ControlPlaneEndpoint,
		APIServer:            v1beta3.APIServer{CertSANs: p.CertSANs},
		Networking: v1beta3.Networking{
			PodSubnet:     prefixString(p.PodSubnet),
			ServiceSubnet: prefixString(p.ServiceSubnet),
		},
	}
	return []any{ic, cc}
}

func joinV1Beta3(c joinConfig) any {
	p := c.p
	jc := &v1beta3.JoinConfiguration{
		TypeMeta: typeMeta3("JoinConfiguration"),
		NodeRegistration: v1beta3.NodeRegistrationOptions{
			Name:                  p.NodeName,
			Taints:                nil,
			IgnorePreflightErrors: p.IgnorePreflight,
			KubeletExtraArgs:      args3(kubeletArgs(p.NodeIP, p.NodeLabels, p.ProviderID)),
		},
		Discovery: v1beta3.Discovery{
			BootstrapToken: &v1beta3.BootstrapTokenDiscovery{
				Token:             p.Token.Reveal(),
				APIServerEndpoint: p.APIServerEndpoint,
				CACertHashes:      []string{hashPrefix + c.hash},
			},
		},
	}
	if cp := p.ControlPlane; cp != nil {
		jc.NodeRegistration.Taints = taints(cp.TaintControlPlane)
		jc.ControlPlane = &v1beta3.JoinControlPlane{
			LocalAPIEndpoint: v1beta3.APIEndpoint{
				AdvertiseAddress: cp.AdvertiseAddress.String(),
				BindPort:         int32Port(cp.BindPort),
			},
			CertificateKey: cp.CertificateKey.Reveal(),
		}
	}
	return jc
}

func args3(kv [][2]string) map[string]string {
	out := make(map[string]string, len(kv))
	for _, a := range kv {
		out[a[0]] = a[1]
	}
	return out
}
