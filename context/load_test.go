package context_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
)

const (
	sampleToken = "yCxieDUS7kra7Vn9ILA0+g=="
	oneEnv      = "export TOKENTXT=\"" + sampleToken + "\"\nexport VMID=\"49\"\nexport ONEGATE_ENDPOINT=\"http://192.168.0.1:5030\"\nexport ETH0_IP=\"10.0.0.5\"\nexport ROLE_NAME=\"worker\"\n"
	contextSh   = "VMID='7'\nONEGATE_ENDPOINT='https://gate.example:5030'\nETH0_IP='10.1.0.7'\n"
)

// fakeMounter serves a directory as the mounted CD and records releases.
type fakeMounter struct {
	dir      string
	err      error
	mounts   int
	releases int
}

func (m *fakeMounter) Mount(context.Context) (string, func() error, error) {
	if m.err != nil {
		return "", nil, m.err
	}
	m.mounts++
	return m.dir, func() error { m.releases++; return nil }, nil
}

func writeFile(t *testing.T, path, data string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoad(t *testing.T) {
	t.Parallel()
	type layout struct {
		oneEnv, runOneEnv string // contents under /var/run and /run; "" = absent
		cd                string // context.sh on the CD; "" = no CD
		cdToken           string // token.txt on the CD
		ctxFile, ctxToken string // explicit context file under /srv and token.txt beside it
	}
	tests := []struct {
		name       string
		layout     layout
		env        map[string]string
		explicit   bool
		wantCreds  vmcontext.Credentials
		wantVar    [2]string // a variable that must be present
		wantOrigin string
		wantMounts int
	}{
		{
			name:       "one_env alone",
			layout:     layout{oneEnv: oneEnv, cd: contextSh, cdToken: "cdtoken\n"},
			wantCreds:  vmcontext.Credentials{Endpoint: "http://192.168.0.1:5030", VMID: 49, Token: vmcontext.NewSecret(sampleToken)},
			wantVar:    [2]string{"ROLE_NAME", "worker"},
			wantOrigin: "/var/run/one-context/one_env",
		},
		{
			name:       "one_env under /run",
			layout:     layout{runOneEnv: oneEnv},
			wantCreds:  vmcontext.Credentials{Endpoint: "http://192.168.0.1:5030", VMID: 49, Token: vmcontext.NewSecret(sampleToken)},
			wantVar:    [2]string{"ETH0_IP", "10.0.0.5"},
			wantOrigin: "/run/one-context/one_env",
		},
		{
			name:       "environment overrides one_env",
			layout:     layout{oneEnv: oneEnv},
			env:        map[string]string{"ONEGATE_ENDPOINT": "http://169.254.16.9:5030", "TOKENTXT": " envtoken\n"},
			wantCreds:  vmcontext.Credentials{Endpoint: "http://169.254.16.9:5030", VMID: 49, Token: vmcontext.NewSecret("envtoken")},
			wantVar:    [2]string{"ROLE_NAME", "worker"},
			wantOrigin: "environment, /var/run/one-context/one_env",
		},
		{
			name:       "CD when there is no one_env",
			layout:     layout{cd: contextSh, cdToken: "  cdtoken\n"},
			wantCreds:  vmcontext.Credentials{Endpoint: "https://gate.example:5030", VMID: 7, Token: vmcontext.NewSecret("cdtoken")},
			wantVar:    [2]string{"ETH0_IP", "10.1.0.7"},
			wantOrigin: "CONTEXT CD",
			wantMounts: 1,
		},
		{
			name:       "CD fills the token one_env lacks",
			layout:     layout{oneEnv: "export VMID=\"49\"\nexport ONEGATE_ENDPOINT=\"http://gw:5030\"\n", cd: contextSh, cdToken: "cdtoken"},
			wantCreds:  vmcontext.Credentials{Endpoint: "http://gw:5030", VMID: 49, Token: vmcontext.NewSecret("cdtoken")},
			wantVar:    [2]string{"VMID", "49"},
			wantOrigin: "/var/run/one-context/one_env, CONTEXT CD",
			wantMounts: 1,
		},
		{
			name:       "ONEGATE_TOKEN on the CD beats token.txt",
			layout:     layout{cd: contextSh + "ONEGATE_TOKEN='inline'\n", cdToken: "cdtoken"},
			wantCreds:  vmcontext.Credentials{Endpoint: "https://gate.example:5030", VMID: 7, Token: vmcontext.NewSecret("inline")},
			wantVar:    [2]string{"ONEGATE_TOKEN", "inline"},
			wantOrigin: "CONTEXT CD",
			wantMounts: 1,
		},
		{
			name:       "explicit file with token.txt beside it",
			layout:     layout{oneEnv: oneEnv, ctxFile: contextSh, ctxToken: "filetoken\n"},
			explicit:   true,
			wantCreds:  vmcontext.Credentials{Endpoint: "https://gate.example:5030", VMID: 7, Token: vmcontext.NewSecret("filetoken")},
			wantVar:    [2]string{"ETH0_IP", "10.1.0.7"},
			wantOrigin: "/srv/context.sh",
		},
		{
			name:       "explicit file with TOKENTXT inside",
			layout:     layout{ctxFile: contextSh + "TOKENTXT='inside'\n"},
			explicit:   true,
			env:        map[string]string{"VMID": "8"},
			wantCreds:  vmcontext.Credentials{Endpoint: "https://gate.example:5030", VMID: 8, Token: vmcontext.NewSecret("inside")},
			wantVar:    [2]string{"VMID", "7"},
			wantOrigin: "environment, /srv/context.sh",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			l := tt.layout
			if l.oneEnv != "" {
				writeFile(t, filepath.Join(root, "var/run/one-context/one_env"), l.oneEnv, 0o400)
			}
			if l.runOneEnv != "" {
				writeFile(t, filepath.Join(root, "run/one-context/one_env"), l.runOneEnv, 0o400)
			}
			m := &fakeMounter{err: vmcontext.ErrNoContextDevice}
			if l.cd != "" {
				cd := t.TempDir()
				writeFile(t, filepath.Join(cd, "context.sh"), l.cd, 0o400)
				writeFile(t, filepath.Join(cd, "token.txt"), l.cdToken, 0o400)
				m = &fakeMounter{dir: cd}
			}
			opts := vmcontext.LoadOptions{Root: root, Getenv: envOf(tt.env), Mounter: m}
			if tt.explicit {
				writeFile(t, filepath.Join(root, "srv/context.sh"), l.ctxFile, 0o400)
				if l.ctxToken != "" {
					writeFile(t, filepath.Join(root, "srv/token.txt"), l.ctxToken, 0o400)
				}
				opts.ContextFile = "/srv/context.sh"
			}
			got, err := vmcontext.Load(context.Background(), opts)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got.Creds.Endpoint != tt.wantCreds.Endpoint || got.Creds.VMID != tt.wantCreds.VMID ||
				got.Creds.Token.Reveal() != tt.wantCreds.Token.Reveal() {
				t.Errorf("Creds = %s %d %q, want %s %d %q", got.Creds.Endpoint, got.Creds.VMID, got.Creds.Token.Reveal(),
					tt.wantCreds.Endpoint, tt.wantCreds.VMID, tt.wantCreds.Token.Reveal())
			}
			if v := got.Vars[tt.wantVar[0]]; v != tt.wantVar[1] {
				t.Errorf("Vars[%s] = %q, want %q", tt.wantVar[0], v, tt.wantVar[1])
			}
			if got.Origin != tt.wantOrigin {
				t.Errorf("Origin = %q, want %q", got.Origin, tt.wantOrigin)
			}
			if m.mounts != tt.wantMounts || m.releases != m.mounts {
				t.Errorf("mounts = %d, releases = %d, want %d each", m.mounts, m.releases, tt.wantMounts)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		oneEnv  string
		cd      string // context.sh on the CD; "" = no device
		env     map[string]string
		explain []string // substrings the error must contain
		is      error
	}{
		{
			name:    "nothing anywhere",
			explain: []string{"missing ONEGATE_ENDPOINT, VMID, token, context variables", "environment: no ONEGATE_ENDPOINT, VMID, token (TOKENTXT)", "one_env", "not found", "CONTEXT CD: no device with LABEL=CONTEXT"},
			is:      vmcontext.ErrNoCredentials,
		},
		{
			name:    "no token anywhere",
			oneEnv:  "export VMID=\"49\"\nexport ONEGATE_ENDPOINT=\"http://gw:5030\"\n",
			cd:      contextSh,
			explain: []string{"missing token", "/var/run/one-context/one_env: no token (TOKENTXT)", "CONTEXT CD: no token (no ONEGATE_TOKEN, no token.txt)"},
			is:      vmcontext.ErrNoCredentials,
		},
		{
			name:    "broken one_env is reported, not fatal when nothing else works either",
			oneEnv:  "garbage\n",
			explain: []string{"/var/run/one-context/one_env: line 1: expected export"},
			is:      vmcontext.ErrNoCredentials,
		},
		{
			name:    "bad VMID",
			oneEnv:  "export VMID=\"x9\"\nexport ONEGATE_ENDPOINT=\"http://gw:5030\"\nexport TOKENTXT=\"s3cr3t-token\"\n",
			explain: []string{`VMID from /var/run/one-context/one_env: "x9" is not a VM ID`},
		},
		{
			name:    "bad endpoint",
			env:     map[string]string{"ONEGATE_ENDPOINT": "gw:5030"},
			oneEnv:  oneEnv,
			explain: []string{"ONEGATE_ENDPOINT from environment: not an http(s) URL"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			if tt.oneEnv != "" {
				writeFile(t, filepath.Join(root, "var/run/one-context/one_env"), tt.oneEnv, 0o400)
			}
			var m vmcontext.Mounter = &fakeMounter{err: vmcontext.ErrNoContextDevice}
			if tt.cd != "" {
				cd := t.TempDir()
				writeFile(t, filepath.Join(cd, "context.sh"), tt.cd, 0o400)
				m = &fakeMounter{dir: cd}
			}
			_, err := vmcontext.Load(context.Background(), vmcontext.LoadOptions{Root: root, Getenv: envOf(tt.env), Mounter: m})
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, s := range tt.explain {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), sampleToken) {
				t.Errorf("error %q leaks the token", err)
			}
		})
	}
}

func TestLoadExplicitFileMissing(t *testing.T) {
	t.Parallel()
	_, err := vmcontext.Load(context.Background(), vmcontext.LoadOptions{
		Root: t.TempDir(), ContextFile: "/nope/context.sh", Getenv: envOf(nil),
		Mounter: &fakeMounter{err: errors.New("must not mount")},
	})
	if err == nil || !strings.Contains(err.Error(), "reading context file /nope/context.sh") {
		t.Fatalf("error = %v", err)
	}
}

// TestLoadReleasesOnBadContext checks that the CD is unmounted even when its
// context.sh does not parse.
func TestLoadReleasesOnBadContext(t *testing.T) {
	t.Parallel()
	cd := t.TempDir()
	writeFile(t, filepath.Join(cd, "context.sh"), "TOKEN='unterminated\n", 0o400)
	m := &fakeMounter{dir: cd}
	_, err := vmcontext.Load(context.Background(), vmcontext.LoadOptions{Root: t.TempDir(), Getenv: envOf(nil), Mounter: m})
	if err == nil || !strings.Contains(err.Error(), "CONTEXT CD: context.sh: line 1: TOKEN: unterminated single quote") {
		t.Fatalf("error = %v", err)
	}
	if m.mounts != 1 || m.releases != 1 {
		t.Errorf("mounts = %d, releases = %d", m.mounts, m.releases)
	}
}
