package testbed

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/kubeadm"
	vmcontext "github.com/onekube/onekube/context"
)

// The one_env the bed writes must read back, through the agent's own
// parser, as exactly the context it was made from.
func TestOneEnvRoundTrip(t *testing.T) {
	vars := map[string]string{
		"VMID": "101", "ONEGATE_ENDPOINT": "http://169.254.16.9:5030", "ETH0_IP": "192.0.2.3",
		"ONEAPP_K8S_IGNORE_PREFLIGHT_ERRORS": "SystemVerification", "ROLE_NAME": "worker",
	}
	got, err := vmcontext.ParseOneEnv(OneEnv(vars, "c2VjcmV0+/="))
	if err != nil {
		t.Fatal(err)
	}
	if got["TOKENTXT"] != "c2VjcmV0+/=" {
		t.Errorf("TOKENTXT %q", got["TOKENTXT"])
	}
	for k, v := range vars {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestWithContext(t *testing.T) {
	tmpl := []byte(`{"name":"k","roles":[{"name":"master","template_contents":{"CONTEXT":{"A":"1"}}},{"name":"worker","template_contents":{}}]}`)
	out, err := withContext(tmpl, map[string]string{"ONEAPP_K8S_IGNORE_PREFLIGHT_ERRORS": "SystemVerification"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Roles []struct {
			TemplateContents struct{ CONTEXT map[string]string } `json:"template_contents"`
		}
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	for i, r := range doc.Roles {
		if r.TemplateContents.CONTEXT["ONEAPP_K8S_IGNORE_PREFLIGHT_ERRORS"] != "SystemVerification" {
			t.Errorf("role %d: CONTEXT %v", i, r.TemplateContents.CONTEXT)
		}
	}
	if doc.Roles[0].TemplateContents.CONTEXT["A"] != "1" {
		t.Error("an existing CONTEXT variable was lost")
	}
	if _, err := withContext([]byte(`{"roles":[{"name":"x"}]}`), map[string]string{"K": "v"}, 0); err == nil {
		t.Error("a role without template_contents was accepted")
	}
}

func TestUpperPath(t *testing.T) {
	cases := map[string]string{
		"/etc/hosts":                          "/d/etc/upper/hosts",
		"/usr/share/onekube/cni/flannel.yaml": "/d/usr/upper/share/onekube/cni/flannel.yaml",
		"/var/lib/../log/x":                   "/d/var/upper/log/x",
		"/run/x":                              "",
		"/etcetera/x":                         "",
		"/etc/../root/x":                      "",
	}
	for in, want := range cases {
		got, err := upperPath("/d", in)
		if (err != nil) != (want == "") || got != want {
			t.Errorf("upperPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// CAHash must agree with the agent's hash of the same CA.
func TestCAHash(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	got, err := CAHash(ca)
	if err != nil {
		t.Fatal(err)
	}
	want, err := kubeadm.CACertHash(ca)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimPrefix(got, "sha256:") != strings.TrimPrefix(want, "sha256:") || !strings.HasPrefix(got, "sha256:") {
		t.Errorf("CAHash %s, the agent's %s", got, want)
	}
	if _, err := CAHash([]byte("not pem")); err == nil {
		t.Error("garbage accepted")
	}
}

func TestNewToken(t *testing.T) {
	re := regexp.MustCompile(`\A[a-z0-9]{6}\.[a-z0-9]{16}\z`)
	for range 50 {
		if tok := NewToken(); !re.MatchString(tok) || !kubeadm.ValidToken(tok) {
			t.Fatalf("token %q has the wrong shape", tok)
		}
	}
}

func TestTail(t *testing.T) {
	if tail("short") != "short" {
		t.Error("a short log was cut")
	}
	long := strings.Repeat("x", logTail+10)
	if got := tail(long); !strings.HasPrefix(got, "[... 10 bytes before]\n") || len(got) != len("[... 10 bytes before]\n")+logTail {
		t.Errorf("tail of a long log: %.40q…", got)
	}
}
