package kubeadm

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstraptokenv1 "k8s.io/kubernetes/cmd/kubeadm/app/apis/bootstraptoken/v1"
	"k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4"
)

// Renderers for kubeadm.k8s.io/v1beta4 (kubeadm 1.31+). Only fields that
// exist since 1.31 are set.

func typeMeta4(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: v1beta4.SchemeGroupVersion.String(), Kind: kind}
}

func initV1Beta4(c initConfig) []any {
	p := c.p
	ic := &v1beta4.InitConfiguration{
		TypeMeta:        typeMeta4("InitConfiguration"),
		BootstrapTokens: []bootstraptokenv1.BootstrapToken{bootstrapToken(p.Token, p.TokenTTL)},
		NodeRegistration: v1beta4.NodeRegistrationOptions{
			Name:                  p.NodeName,
			Taints:                taints(p.TaintControlPlane),
			IgnorePreflightErrors: p.IgnorePreflight,
			KubeletExtraArgs:      args4(kubeletArgs(p.AdvertiseAddress, p.NodeLabels, p.ProviderID)),
		},
		LocalAPIEndpoint: v1beta4.APIEndpoint{
			AdvertiseAddress: p.AdvertiseAddress.String(),
			BindPort:         int32Port(p.BindPort),
		},
		CertificateKey: p.CertificateKey.Reveal(),
	}
	cc := &v1beta4.ClusterConfiguration{
		TypeMeta:             typeMeta4("ClusterConfiguration"),
		KubernetesVersion:    c.k8sVersion,
		ControlPlaneEndpoint: p.ControlPlaneEndpoint,
		APIServer:            v1beta4.APIServer{CertSANs: p.CertSANs},
		Networking: v1beta4.Networking{
			PodSubnet:     prefixString(p.PodSubnet),
			ServiceSubnet: prefixString(p.ServiceSubnet),
		},
	}
	if p.CertificateValidity > 0 {
		cc.CertificateValidityPeriod = &metav1.Duration{Duration: p.CertificateValidity}
	}
	return []any{ic, cc}
}

func joinV1Beta4(c joinConfig) any {
	p := c.p
	jc := &v1beta4.JoinConfiguration{
		TypeMeta: typeMeta4("JoinConfiguration"),
		NodeRegistration: v1beta4.NodeRegistrationOptions{
			Name: p.NodeName,
			// A worker gets no taints either way; a control plane gets
			// kubeadm's unless the caller dropped it.
			Taints:                nil,
			IgnorePreflightErrors: p.IgnorePreflight,
			KubeletExtraArgs:      args4(kubeletArgs(p.NodeIP, p.NodeLabels, p.ProviderID)),
		},
		Discovery: v1beta4.Discovery{
			BootstrapToken: &v1beta4.BootstrapTokenDiscovery{
				Token:             p.Token.Reveal(),
				APIServerEndpoint: p.APIServerEndpoint,
				CACertHashes:      []string{hashPrefix + c.hash},
			},
		},
	}
	if cp := p.ControlPlane; cp != nil {
		jc.NodeRegistration.Taints = taints(cp.TaintControlPlane)
		jc.ControlPlane = &v1beta4.JoinControlPlane{
			LocalAPIEndpoint: v1beta4.APIEndpoint{
				AdvertiseAddress: cp.AdvertiseAddress.String(),
				BindPort:         int32Port(cp.BindPort),
			},
			CertificateKey: cp.CertificateKey.Reveal(),
		}
	}
	return jc
}

func args4(kv [][2]string) []v1beta4.Arg {
	out := make([]v1beta4.Arg, len(kv))
	for i, a := range kv {
		out[i] = v1beta4.Arg{Name: a[0], Value: a[1]}
	}
	return out
}
