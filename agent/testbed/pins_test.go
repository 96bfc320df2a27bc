package testbed

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/onekube/onekube/agent/internal/standin/env"
	"github.com/onekube/onekube/agent/testbed/loopback"
	"github.com/onekube/onekube/appliance/marketplace"
)

// repoFile reads a file by its path from the repository root.
func repoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// match returns the first submatch of re in s, failing the test without one.
func match(t *testing.T, what, s string, re *regexp.Regexp) string {
	t.Helper()
	m := re.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("%s: no match for %s", what, re)
	}
	return m[1]
}

// TestVersionsFollowThePin ties every place that names the default
// Kubernetes release to go.mod's k8s.io/kubernetes pin: the kubeadm the
// agent renders for and the oracle, the bed, the stand-ins and the appliance
// must be one release, or a test passes against a kubeadm nobody ships.
func TestVersionsFollowThePin(t *testing.T) {
	gomod := repoFile(t, "go.mod")
	pin := match(t, "go.mod", gomod, regexp.MustCompile(`(?m)^\tk8s\.io/kubernetes (v1\.\d+\.\d+)$`))
	staging := "v0." + strings.TrimPrefix(pin, "v1.") // k8s.io/kubernetes v1.N.P ships staging v0.N.P

	// Each staging module is replaced at the pin's staging tag, and those
	// required directly are required at it too.
	replaces := regexp.MustCompile(`(?m)^\t(k8s\.io/[a-z-]+) => k8s\.io/[a-z-]+ (v\S+)$`).FindAllStringSubmatch(gomod, -1)
	if len(replaces) == 0 {
		t.Fatal("go.mod: no k8s.io replaces")
	}
	for _, r := range replaces {
		if r[2] != staging {
			t.Errorf("go.mod replaces %s at %s, want %s (the staging tag of k8s.io/kubernetes %s)", r[1], r[2], staging, pin)
		}
	}
	for _, m := range []string{"k8s.io/api", "k8s.io/apimachinery", "k8s.io/client-go", "k8s.io/cri-api", "k8s.io/kubectl"} {
		got := match(t, "go.mod "+m, gomod, regexp.MustCompile(`(?m)^\t`+regexp.QuoteMeta(m)+` (v\S+)`))
		if got != staging {
			t.Errorf("go.mod requires %s %s, want %s", m, got, staging)
		}
	}

	makefile := repoFile(t, "Makefile")
	appliance, err := marketplace.ParseVersions([]byte(repoFile(t, "appliance/versions.env")))
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]string{
		"Makefile KUBEADM_TAG (the oracle and the bed)": match(t, "Makefile", makefile, regexp.MustCompile(`(?m)^KUBEADM_TAG\s*\?=\s*(\S+)$`)),
		"testbed.DefaultVersion":                        DefaultVersion,
		"loopback.Tag":                                  loopback.Tag,
		"the stand-ins' env.DefaultVersion":             env.DefaultVersion,
		// fakenode reports the installed kubelet stand-in's version (the bed's release).
		"appliance/versions.env ONEKUBE_K8S_VERSION": "v" + appliance.Kubernetes,
	} {
		if got != pin {
			t.Errorf("%s is %s, go.mod pins k8s.io/kubernetes %s", name, got, pin)
		}
	}

	// The etcd client speaks to the etcd kubeadm deploys: pin the release
	// k8s.io/kubernetes itself requires (its go.mod; kubeadm's
	// DefaultEtcdVersion in cmd/kubeadm/app/constants is that release).
	etcdRe := regexp.MustCompile(`(?m)^\tgo\.etcd\.io/etcd/client/v3 (v\S+)`)
	ours := match(t, "go.mod etcd client", gomod, etcdRe)
	out, err := exec.Command("go", "mod", "download", "-json", "k8s.io/kubernetes@"+pin).Output()
	if err != nil {
		t.Skipf("k8s.io/kubernetes@%s's go.mod is not at hand (go mod download: %v); etcd client %s unchecked", pin, err, ours)
	}
	modPath := match(t, "go mod download", string(out), regexp.MustCompile(`"GoMod": "([^"]+)"`))
	upstream, err := os.ReadFile(modPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := match(t, "k8s.io/kubernetes go.mod", string(upstream), etcdRe); ours != want {
		t.Errorf("go.mod requires go.etcd.io/etcd/client/v3 %s, k8s.io/kubernetes %s requires %s", ours, pin, want)
	}
}
