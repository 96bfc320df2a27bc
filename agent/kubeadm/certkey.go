package kubeadm

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"

	"k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4"
	"sigs.k8s.io/yaml"

	vmcontext "github.com/onekube/onekube/context"
)

// GenerateCertificateKey makes a key for the uploaded control-plane
// certificates: 32 random bytes, hex, as `kubeadm certs certificate-key`
// prints (AES-256-GCM, cmd/kubeadm/app/util/crypto). r nil means
// crypto/rand.
func GenerateCertificateKey(r io.Reader) (vmcontext.Secret, error) {
	if r == nil {
		r = rand.Reader
	}
	b := make([]byte, 32)
	if _, err := io.ReadFull(r, b); err != nil {
		return vmcontext.Secret{}, fmt.Errorf("generating the certificate key: %w", err)
	}
	return vmcontext.NewSecret(hex.EncodeToString(b)), nil
}

// InitConfigCertificateKey reads the certificateKey of a rendered init
// config (empty Secret when it has none).
func InitConfigCertificateKey(b []byte) (vmcontext.Secret, error) {
	for _, doc := range bytes.Split(b, []byte("\n---")) {
		var v struct {
			Kind           string `json:"kind"`
			CertificateKey string `json:"certificateKey"`
		}
		if err := yaml.Unmarshal(doc, &v); err != nil {
			return vmcontext.Secret{}, fmt.Errorf("reading the init config: %w", err)
		}
		if v.Kind == "InitConfiguration" {
			k := vmcontext.NewSecret(v.CertificateKey)
			return k, checkCertificateKey(k)
		}
	}
	return vmcontext.Secret{}, nil
}

// RenderUploadCerts renders the config `kubeadm init phase upload-certs
// --upload-certs --config` reads on a control plane: the certificate key,
// the release and this node's name; every other field keeps kubeadm's
// default (the certificates in /etc/kubernetes/pki, stacked etcd).
func RenderUploadCerts(k8sVersion, nodeName string, key vmcontext.Secret) ([]byte, error) {
	ver, err := checkKubernetesVersion(k8sVersion)
	if err != nil {
		return nil, err
	}
	if err := checkNodeName(nodeName); err != nil {
		return nil, err
	}
	if key.IsZero() {
		return nil, fmt.Errorf("%w: the upload needs a certificate key", ErrParams)
	}
	if err := checkCertificateKey(key); err != nil {
		return nil, err
	}
	ic := &v1beta4.InitConfiguration{
		TypeMeta:         typeMeta4("InitConfiguration"),
		NodeRegistration: v1beta4.NodeRegistrationOptions{Name: nodeName},
		CertificateKey:   key.Reveal(),
	}
	cc := &v1beta4.ClusterConfiguration{TypeMeta: typeMeta4("ClusterConfiguration"), KubernetesVersion: ver}
	return marshalDocs(ic, cc)
}
