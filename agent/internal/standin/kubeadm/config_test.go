package main

import (
	"strings"
	"testing"
)

const initDoc = `apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
bootstrapTokens:
- token: abcdef.0123456789abcdef
localAPIEndpoint:
  advertiseAddress: 192.0.2.10
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v1.37.2
`

func TestDecodeConfig(t *testing.T) {
	c, err := decodeConfig([]byte(initDoc))
	if err != nil {
		t.Fatal(err)
	}
	if c.init == nil || c.cluster == nil || c.init.tokens[0].Token.ID != "abcdef" || c.cluster.kubernetesVersion != "v1.37.2" {
		t.Errorf("decoded %+v", c)
	}
	bad := map[string]string{
		strings.Replace(initDoc, "kind: ClusterConfiguration", "kind: ClusterConfig", 1):             `no kind "ClusterConfig"`,
		strings.Replace(initDoc, "kubernetesVersion:", "KubernetesVersion:", 1):                      `unknown field "KubernetesVersion"`,
		strings.Replace(initDoc, "advertiseAddress:", "advertiseAddress: x\n  advertiseAddress:", 1): "already set in map",
		initDoc + "---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\n":               `old API spec: "kubeadm.k8s.io/v1beta3" (kind: "JoinConfiguration"). Please use kubeadm v1.36`,
		strings.ReplaceAll(initDoc, "v1beta4", "v1"):                                                 "unknown API spec",
		initDoc + "---\nkind: InitConfiguration\n":                                                   "apiVersion is mandatory",
		strings.Replace(initDoc, "abcdef.0123456789abcdef", "abcdef", 1):                             "bootstrap token",
	}
	for in, want := range bad {
		if _, err := decodeConfig([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q for\n%s", err, want, in)
		}
	}
}

func FuzzDecodeConfig(f *testing.F) {
	f.Add([]byte(initDoc))
	f.Add([]byte("apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\ndiscovery: {bootstrapToken: {token: x}}\n"))
	f.Add([]byte("---\n---\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeConfig(b)
		if err != nil {
			return
		}
		// Whatever decodes must be checkable without panicking.
		if c.init != nil && c.cluster != nil {
			_ = validateInit(c)
		}
		if c.join != nil {
			_ = validateJoin(c)
		}
	})
}
