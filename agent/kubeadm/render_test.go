package kubeadm

import (
	"bytes"
	"errors"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	vmcontext "github.com/onekube/onekube/context"
)

var update = flag.Bool("update", false, "rewrite golden files")

func secret(s string) vmcontext.Secret { return vmcontext.NewSecret(s) }

// Fixed test values; none is a real credential.
const (
	testToken   = "abcdef.0123456789abcdef"
	testHash    = "3463b7ab930d485bd0d27272c1f95582754053e09c8e9932ef43a13a7255de13"
	testCertKey = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
)

func baseInit() InitParams {
	return InitParams{
		KubernetesVersion: "v1.37.2",
		NodeName:          "onekube-master-0",
		AdvertiseAddress:  netip.MustParseAddr("192.0.2.10"),
		BindPort:          6443,
		PodSubnet:         netip.MustParsePrefix("10.244.0.0/16"),
		ServiceSubnet:     netip.MustParsePrefix("10.96.0.0/12"),
		Token:             secret(testToken),
		TokenTTL:          24 * time.Hour,
		ProviderID:        "one://10",
	}
}

func baseJoin() JoinParams {
	return JoinParams{
		KubernetesVersion: "v1.37.2",
		NodeName:          "onekube-worker-1",
		NodeIP:            netip.MustParseAddr("192.0.2.11"),
		APIServerEndpoint: "192.0.2.10:6443",
		Token:             secret(testToken),
		CACertHash:        testHash,
		ProviderID:        "one://11",
	}
}

// initCases and joinCases feed the golden tests and, re-targeted at the
// oracle's version, the kubeadm validation tests.
func initCases() map[string]InitParams {
	ha := baseInit()
	ha.AdvertiseAddress = netip.MustParseAddr("2001:db8::10")
	ha.PodSubnet = netip.MustParsePrefix("fd00:10:244::/56")
	ha.ServiceSubnet = netip.MustParsePrefix("fd00:10:96::/112")
	ha.TaintControlPlane = true
	ha.ControlPlaneEndpoint = "[2001:db8::100]:6443"
	ha.CertSANs = []string{"2001:db8::100"}
	ha.CertificateKey = secret(testCertKey)
	lb := baseInit()
	lb.ControlPlaneEndpoint = "127.0.0.1:6444"
	lb.CertSANs = []string{"127.0.0.1"}
	lb.CertificateKey = secret(testCertKey)
	ha.TokenTTL = 90 * time.Minute
	short := baseInit()
	short.CertificateValidity = 5 * time.Minute
	minimal := baseInit()
	minimal.BindPort, minimal.PodSubnet, minimal.ServiceSubnet = 0, netip.Prefix{}, netip.Prefix{}
	return map[string]InitParams{
		"init_v1beta4":               baseInit(),
		"init_v1beta4_ha_ipv6":       ha,
		"init_v1beta4_minimal":       minimal,
		"init_v1beta4_localbalancer": lb,
		"init_v1beta4_certvalidity":  short,
	}
}

func joinCases() map[string]JoinParams {
	cp := baseJoin()
	cp.NodeName = "onekube-master-1"
	cp.NodeIP = netip.MustParseAddr("2001:db8::11")
	cp.APIServerEndpoint = "[2001:db8::100]:6443"
	cp.ControlPlane = &JoinControlPlane{
		AdvertiseAddress: netip.MustParseAddr("2001:db8::11"),
		BindPort:         6443,
		CertificateKey:   secret(testCertKey),
	}
	return map[string]JoinParams{
		"join_v1beta4":              baseJoin(),
		"join_v1beta4_controlplane": cp,
	}
}

func TestRenderGolden(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, name string, got []byte) {
		t.Helper()
		path := filepath.Join("testdata", name+".golden.yaml")
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the render:\n%s", path, got)
		}
	}
	for name, p := range initCases() {
		t.Run(name, func(t *testing.T) {
			got, err := RenderInit(p)
			if err != nil {
				t.Fatal(err)
			}
			check(t, name, got)
		})
	}
	for name, p := range joinCases() {
		t.Run(name, func(t *testing.T) {
			got, err := RenderJoin(p)
			if err != nil {
				t.Fatal(err)
			}
			check(t, name, got)
		})
	}
}

func TestRenderDeterministic(t *testing.T) {
	t.Parallel()
	a, _ := RenderInit(baseInit())
	b, _ := RenderInit(baseInit())
	if !bytes.Equal(a, b) {
		t.Error("two renders of the same params differ")
	}
}

// splitDocs splits a rendered file into its YAML documents.
func splitDocs(b []byte) [][]byte { return bytes.Split(b, []byte("\n---\n")) }

// strictDecode decodes YAML as Kubernetes' serializer does: case-sensitive
// field names, unknown and duplicate fields refused (yaml.UnmarshalStrict
// alone matches names case-insensitively).
func strictDecode(t *testing.T, doc []byte, v any) error {
	t.Helper()
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strictErrs, err := sigsjson.UnmarshalStrict(js, v, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	return errors.Join(strictErrs...)
}

// TestRenderRoundTrip decodes the output strictly with kubeadm's types, as
// kubeadm does, and checks the values landed in the right fields.
func TestRenderRoundTrip(t *testing.T) {
	t.Parallel()
	p := baseInit()
	out, err := RenderInit(p)
	if err != nil {
		t.Fatal(err)
	}
	docs := splitDocs(out)
	if len(docs) != 2 {
		t.Fatalf("want 2 documents, got %d", len(docs))
	}
	var ic v1beta4.InitConfiguration
	var cc v1beta4.ClusterConfiguration
	if err := strictDecode(t, docs[0], &ic); err != nil {
		t.Fatal(err)
	}
	if err := strictDecode(t, docs[1], &cc); err != nil {
		t.Fatal(err)
	}
	bt := ic.BootstrapTokens[0]
	switch {
	case ic.Kind != "InitConfiguration" || cc.Kind != "ClusterConfiguration" || cc.APIVersion != V1Beta4:
		t.Errorf("type meta: %v / %v", ic.TypeMeta, cc.TypeMeta)
	case bt.Token.String() != testToken || bt.TTL.Duration != 24*time.Hour:
		t.Errorf("token %v ttl %v", bt.Token, bt.TTL)
	case strings.Join(bt.Usages, ",") != "signing,authentication" || bt.Groups[0] != tokenGroup:
		t.Errorf("usages %v groups %v", bt.Usages, bt.Groups)
	case ic.NodeRegistration.Taints == nil || len(ic.NodeRegistration.Taints) != 0:
		t.Errorf("untainted master must render taints: [], got %#v", ic.NodeRegistration.Taints)
	case ic.NodeRegistration.KubeletExtraArgs[0] != (v1beta4.Arg{Name: "node-ip", Value: "192.0.2.10"}):
		t.Errorf("kubelet args %v", ic.NodeRegistration.KubeletExtraArgs)
	case ic.LocalAPIEndpoint.AdvertiseAddress != "192.0.2.10" || ic.LocalAPIEndpoint.BindPort != 6443:
		t.Errorf("endpoint %v", ic.LocalAPIEndpoint)
	case cc.KubernetesVersion != "v1.37.2" || cc.Networking.PodSubnet != "10.244.0.0/16" || cc.Networking.ServiceSubnet != "10.96.0.0/12":
		t.Errorf("cluster %v %v", cc.KubernetesVersion, cc.Networking)
	case ic.NodeRegistration.CRISocket != "":
		t.Errorf("criSocket should be left to kubeadm")
	}

	p.TaintControlPlane = true
	out, _ = RenderInit(p)
	if !bytes.Contains(out, []byte("taints: null")) {
		t.Errorf("tainted master must leave taints unset (null):\n%s", out)
	}

	jp := baseJoin()
	jp.CACertHash = "sha256:" + strings.ToUpper(testHash) // normalised on output
	out, err = RenderJoin(jp)
	if err != nil {
		t.Fatal(err)
	}
	var jc v1beta4.JoinConfiguration
	if err := strictDecode(t, out, &jc); err != nil {
		t.Fatal(err)
	}
	d := jc.Discovery.BootstrapToken
	switch {
	case jc.APIVersion != V1Beta4 || jc.Kind != "JoinConfiguration":
		t.Errorf("type meta %v", jc.TypeMeta)
	case d == nil || d.Token != testToken || d.APIServerEndpoint != "192.0.2.10:6443":
		t.Errorf("discovery %+v", d)
	case len(d.CACertHashes) != 1 || d.CACertHashes[0] != "sha256:"+testHash:
		t.Errorf("hashes %v", d.CACertHashes)
	case jc.NodeRegistration.KubeletExtraArgs[0] != (v1beta4.Arg{Name: "node-ip", Value: "192.0.2.11"}) || jc.NodeRegistration.Name != "onekube-worker-1":
		t.Errorf("node registration %+v", jc.NodeRegistration)
	case jc.ControlPlane != nil:
		t.Errorf("worker rendered as control plane")
	}
}

func TestRenderInitRejects(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		mod  func(*InitParams)
		want string
	}{
		"no version":       {func(p *InitParams) { p.KubernetesVersion = "" }, "KubernetesVersion is empty"},
		"minor only":       {func(p *InitParams) { p.KubernetesVersion = "v1.36" }, "needs a patch release"},
		"old version":      {func(p *InitParams) { p.KubernetesVersion = "v1.21.0" }, "older than v1.31"},
		"v1beta3 target":   {func(p *InitParams) { p.KubernetesVersion = "v1.30.14" }, "older than v1.31"},
		"v1beta3 override": {func(p *InitParams) { p.APIVersion = "kubeadm.k8s.io/v1beta3" }, "no longer renders"},
		"no node name":     {func(p *InitParams) { p.NodeName = "" }, "NodeName is empty"},
		"upper node name":  {func(p *InitParams) { p.NodeName = "Master" }, "not a lowercase DNS name"},
		"dash node name":   {func(p *InitParams) { p.NodeName = "m.-x" }, "not a lowercase DNS name"},
		"long node name":   {func(p *InitParams) { p.NodeName = strings.Repeat("a.", 127) + "a" }, "at most 253"},
		"no address":       {func(p *InitParams) { p.AdvertiseAddress = netip.Addr{} }, "AdvertiseAddress is not set"},
		"any address":      {func(p *InitParams) { p.AdvertiseAddress = netip.IPv4Unspecified() }, "not a unicast"},
		"zoned address":    {func(p *InitParams) { p.AdvertiseAddress = netip.MustParseAddr("fe80::1%eth0") }, "zone"},
		"bad port":         {func(p *InitParams) { p.BindPort = 70000 }, "not a TCP port"},
		"pod host bits":    {func(p *InitParams) { p.PodSubnet = netip.MustParsePrefix("10.244.1.0/16") }, "host bits set (network is 10.244.0.0/16)"},
		"svc host bits":    {func(p *InitParams) { p.ServiceSubnet = netip.MustParsePrefix("10.96.0.1/12") }, "ServiceSubnet"},
		"no token":         {func(p *InitParams) { p.Token = vmcontext.Secret{} }, "Token is empty"},
		"bad token":        {func(p *InitParams) { p.Token = secret("abcdef-0123456789abcdef") }, "not of the form"},
		"eternal token":    {func(p *InitParams) { p.TokenTTL = 0 }, "never expires"},
		"negative ttl":     {func(p *InitParams) { p.TokenTTL = -time.Hour }, "TokenTTL must be positive"},
		"bad endpoint":     {func(p *InitParams) { p.ControlPlaneEndpoint = "2001:db8::1:6443" }, "not host:port"},
		"endpoint no port": {func(p *InitParams) { p.ControlPlaneEndpoint = "vip:" }, "no valid port"},
		"bad cert key":     {func(p *InitParams) { p.CertificateKey = secret("abc") }, "64 hex digits"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := baseInit()
			tc.mod(&p)
			out, err := RenderInit(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if out != nil {
				t.Error("output returned with an error")
			}
			if strings.Contains(err.Error(), testToken) || strings.Contains(err.Error(), "abcdef-0123456789abcdef") {
				t.Error("error leaks the token")
			}
		})
	}
}

func TestRenderJoinRejects(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		mod  func(*JoinParams)
		want string
	}{
		"no version":    {func(p *JoinParams) { p.KubernetesVersion = "garbage" }, "invalid Kubernetes version"},
		"no node name":  {func(p *JoinParams) { p.NodeName = "" }, "NodeName is empty"},
		"no node ip":    {func(p *JoinParams) { p.NodeIP = netip.Addr{} }, "NodeIP is not set"},
		"no endpoint":   {func(p *JoinParams) { p.APIServerEndpoint = "" }, "APIServerEndpoint"},
		"bare ipv6":     {func(p *JoinParams) { p.APIServerEndpoint = "fd00::1:6443" }, "not host:port"},
		"no port":       {func(p *JoinParams) { p.APIServerEndpoint = "192.0.2.10" }, "not host:port"},
		"port zero":     {func(p *JoinParams) { p.APIServerEndpoint = "192.0.2.10:0" }, "no valid port"},
		"no host":       {func(p *JoinParams) { p.APIServerEndpoint = ":6443" }, "no host"},
		"bad token":     {func(p *JoinParams) { p.Token = secret("abcdef.0123456789ABCDEF") }, "not of the form"},
		"no hash":       {func(p *JoinParams) { p.CACertHash = "" }, "refused"},
		"short hash":    {func(p *JoinParams) { p.CACertHash = testHash[:63] }, "CACertHash: invalid CA certificate hash"},
		"cp no address": {func(p *JoinParams) { p.ControlPlane = &JoinControlPlane{CertificateKey: secret(testCertKey)} }, "ControlPlane.AdvertiseAddress"},
		"cp no key":     {func(p *JoinParams) { p.ControlPlane = &JoinControlPlane{AdvertiseAddress: p.NodeIP} }, "CertificateKey is empty"},
		"cp bad key": {func(p *JoinParams) {
			p.ControlPlane = &JoinControlPlane{AdvertiseAddress: p.NodeIP, CertificateKey: secret("zz")}
		}, "64 hex"},
		"cp bad port": {func(p *JoinParams) {
			p.ControlPlane = &JoinControlPlane{AdvertiseAddress: p.NodeIP, BindPort: -1, CertificateKey: secret(testCertKey)}
		}, "not a TCP port"},
		"v1beta3 target":   {func(p *JoinParams) { p.KubernetesVersion = "v1.30.2" }, "older than v1.31"},
		"v1beta3 override": {func(p *JoinParams) { p.APIVersion = "kubeadm.k8s.io/v1beta3" }, "no longer renders"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := baseJoin()
			tc.mod(&p)
			_, err := RenderJoin(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if !errors.Is(err, ErrParams) && !errors.Is(err, ErrHash) && !errors.Is(err, ErrToken) && !errors.Is(err, ErrVersion) {
				t.Errorf("err = %v wraps no sentinel", err)
			}
		})
	}
}

// An operator's preflight ignores reach kubeadm in both documents, with the
// API version picked or pinned; without any, the field stays out of the file.
func TestRenderIgnorePreflight(t *testing.T) {
	t.Parallel()
	for _, api := range []string{"", V1Beta4} { // picked, and pinned
		ip := baseInit()
		ip.APIVersion = api
		ip.IgnorePreflight = []string{"NumCPU", "SystemVerification"}
		jp := baseJoin()
		jp.APIVersion = api
		jp.IgnorePreflight = ip.IgnorePreflight
		for name, render := range map[string]func() ([]byte, error){
			"init": func() ([]byte, error) { return RenderInit(ip) },
			"join": func() ([]byte, error) { return RenderJoin(jp) },
		} {
			out, err := render()
			if err != nil {
				t.Fatalf("%s %s: %v", api, name, err)
			}
			if !strings.Contains(string(out), "ignorePreflightErrors:\n  - NumCPU\n  - SystemVerification\n") {
				t.Errorf("%s %s: no ignorePreflightErrors list in\n%s", api, name, out)
			}
		}
	}
	out, err := RenderInit(baseInit())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "ignorePreflightErrors") {
		t.Errorf("ignorePreflightErrors rendered without any set:\n%s", out)
	}
}

// Node labels reach the kubelet's flags (API version picked or pinned), sorted
// into one stable flag; a label the kubelet would refuse is refused here.
func TestRenderNodeLabels(t *testing.T) {
	t.Parallel()
	labels := map[string]string{LabelVMID: "42", "example.com/zone": "a"}
	for _, api := range []string{"", V1Beta4} { // picked, and pinned
		ip := baseInit()
		ip.APIVersion, ip.NodeLabels = api, labels
		jp := baseJoin()
		jp.APIVersion, jp.NodeLabels = api, labels
		for name, render := range map[string]func() ([]byte, error){
			"init": func() ([]byte, error) { return RenderInit(ip) },
			"join": func() ([]byte, error) { return RenderJoin(jp) },
		} {
			out, err := render()
			if err != nil {
				t.Fatalf("%s %s: %v", api, name, err)
			}
			if !strings.Contains(string(out), "example.com/zone=a,onekube.io/vm-id=42") {
				t.Errorf("%s %s: node-labels missing or unsorted in\n%s", api, name, out)
			}
		}
	}
	for _, bad := range []map[string]string{
		{"onekube.io/vm id": "1"},
		{LabelVMID: "not a value!"},
		{"": "x"},
	} {
		ip := baseInit()
		ip.NodeLabels = bad
		if _, err := RenderInit(ip); !errors.Is(err, ErrParams) {
			t.Errorf("init with %v: err = %v, want ErrParams", bad, err)
		}
		jp := baseJoin()
		jp.NodeLabels = bad
		if _, err := RenderJoin(jp); !errors.Is(err, ErrParams) {
			t.Errorf("join with %v: err = %v, want ErrParams", bad, err)
		}
	}
}
