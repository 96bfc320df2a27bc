package context

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Credentials are what a VM needs to talk to OneGate.
type Credentials struct {
	Endpoint string
	VMID     int
	Token    Secret
}

// LoadOptions tell Load where to look.
type LoadOptions struct {
	// Root is joined to every path Load reads; "" means "/".
	Root string
	// ContextFile, when set, is an explicit context.sh (joined to Root). The
	// token comes from ONEGATE_TOKEN or TOKENTXT inside it, else from the
	// token.txt beside it. Empty means discovery: one_env, then the CD.
	ContextFile string
	// Getenv reads the environment; nil means os.Getenv. ONEGATE_ENDPOINT,
	// VMID and TOKENTXT found here override every file.
	Getenv func(string) string
	// Mounter reaches the CONTEXT CD; nil means CDMounter{Root: Root}.
	Mounter Mounter
}

// VMContext is a VM's context variables and OneGate credentials.
type VMContext struct {
	Vars  Vars
	Creds Credentials
	// Origin names the sources used, for messages ("environment,
	// /var/run/one-context/one_env").
	Origin string
}

// Paths of one-context's environment file: RUNTIME_DIR is /var/run/one-context,
// which systemd distributions link to /run/one-context.
var oneEnvPaths = []string{"/var/run/one-context/one_env", "/run/one-context/one_env"}

// source is what one place yielded. Fields left empty are missing there.
type source struct {
	name     string
	vars     Vars // nil: this source holds no context variables
	endpoint string
	vmid     string
	token    string
	// tokenHint says where the token was looked for, when that is not
	// obvious from name.
	tokenHint string
}

// Load finds the VM's context variables and OneGate credentials, in the
// order of reference §2.3: the environment, then one_env, then the CONTEXT
// CD (or, instead of the last two, an explicit context file). Each credential
// is taken from the first source that has it; later sources are read only
// while something is still missing.
func Load(ctx context.Context, o LoadOptions) (*VMContext, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var acc accumulator
	acc.add(source{
		name:      "environment",
		endpoint:  getenv(KeyOneGateEndpoint),
		vmid:      getenv(KeyVMID),
		token:     getenv(KeyTokenTxt),
		tokenHint: " (" + KeyTokenTxt + ")",
	})
	if o.ContextFile != "" {
		s, err := readContextFile(o.Root, o.ContextFile)
		if err != nil {
			return nil, err
		}
		acc.add(s)
	} else {
		mounter := o.Mounter
		if mounter == nil {
			mounter = CDMounter{Root: o.Root}
		}
		steps := []struct {
			name string
			read func() (source, error)
		}{
			{"one_env (" + strings.Join(oneEnvPaths, ", ") + ")", func() (source, error) { return readOneEnv(o.Root) }},
			{"CONTEXT CD", func() (source, error) { return readContextCD(ctx, mounter) }},
		}
		for _, st := range steps {
			if acc.done() {
				break
			}
			s, err := st.read()
			if err != nil {
				acc.tried = append(acc.tried, st.name+": "+err.Error())
				continue
			}
			acc.add(s)
		}
	}
	return acc.result()
}

// accumulator merges sources, first one wins per field.
type accumulator struct {
	vars                  Vars
	endpoint, vmid, token string
	vmidFrom, endFrom     string
	origins               []string
	tried                 []string
}

func (a *accumulator) add(s source) {
	used := false
	take := func(dst *string, v string) bool {
		v = strings.TrimSpace(v)
		if *dst != "" || v == "" {
			return false
		}
		*dst, used = v, true
		return true
	}
	if take(&a.endpoint, s.endpoint) {
		a.endFrom = s.name
	}
	if take(&a.vmid, s.vmid) {
		a.vmidFrom = s.name
	}
	take(&a.token, s.token)
	if a.vars == nil && s.vars != nil {
		a.vars, used = s.vars, true
	}
	if used {
		a.origins = append(a.origins, s.name)
	}
	if m := s.missing(); m != "" {
		a.tried = append(a.tried, s.name+": "+m)
	}
}

func (s source) missing() string {
	var m []string
	if strings.TrimSpace(s.endpoint) == "" {
		m = append(m, KeyOneGateEndpoint)
	}
	if strings.TrimSpace(s.vmid) == "" {
		m = append(m, KeyVMID)
	}
	if strings.TrimSpace(s.token) == "" {
		m = append(m, "token"+s.tokenHint)
	}
	if len(m) == 0 {
		return ""
	}
	return "no " + strings.Join(m, ", ")
}

func (a *accumulator) done() bool {
	return a.vars != nil && a.endpoint != "" && a.vmid != "" && a.token != ""
}

func (a *accumulator) result() (*VMContext, error) {
	var missing []string
	if a.endpoint == "" {
		missing = append(missing, KeyOneGateEndpoint)
	}
	if a.vmid == "" {
		missing = append(missing, KeyVMID)
	}
	if a.token == "" {
		missing = append(missing, "token")
	}
	if a.vars == nil {
		missing = append(missing, "context variables")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: missing %s (tried %s)", ErrNoCredentials,
			strings.Join(missing, ", "), strings.Join(a.tried, "; "))
	}
	vmid, err := strconv.Atoi(a.vmid)
	if err != nil || vmid < 0 {
		return nil, fmt.Errorf("%s from %s: %q is not a VM ID", KeyVMID, a.vmidFrom, a.vmid)
	}
	if err := checkEndpoint(a.endpoint); err != nil {
		return nil, fmt.Errorf("%s from %s: %w", KeyOneGateEndpoint, a.endFrom, err)
	}
	return &VMContext{
		Vars:   a.vars,
		Creds:  Credentials{Endpoint: a.endpoint, VMID: vmid, Token: NewSecret(a.token)},
		Origin: strings.Join(a.origins, ", "),
	}, nil
}

// checkEndpoint accepts an absolute http or https URL. The value is not
// echoed: a URL may carry user information.
func checkEndpoint(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("not an http(s) URL")
	}
	return nil
}

func readOneEnv(root string) (source, error) {
	var errs []string
	for _, p := range oneEnvPaths {
		data, err := os.ReadFile(rootPath(root, p))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, describeReadErr(p, err))
			continue
		}
		vars, err := ParseOneEnv(data)
		if err != nil {
			errs = append(errs, p+": "+err.Error())
			continue
		}
		return source{
			name: p, vars: vars,
			endpoint: vars[KeyOneGateEndpoint], vmid: vars[KeyVMID], token: vars[KeyTokenTxt],
			tokenHint: " (" + KeyTokenTxt + ")",
		}, nil
	}
	if len(errs) == 0 {
		return source{}, errors.New("not found")
	}
	return source{}, errors.New(strings.Join(errs, "; "))
}

func describeReadErr(p string, err error) string {
	if errors.Is(err, fs.ErrPermission) {
		return p + ": permission denied (root only)"
	}
	return err.Error()
}

// readContextCD mounts the CD, reads context.sh and token.txt, and always
// unmounts before returning.
func readContextCD(ctx context.Context, m Mounter) (s source, err error) {
	dir, release, err := m.Mount(ctx)
	if err != nil {
		return source{}, err
	}
	defer func() {
		if rerr := release(); rerr != nil {
			s, err = source{}, errors.Join(err, rerr)
		}
	}()
	return readContextDir("CONTEXT CD", filepath.Join(dir, "context.sh"))
}

func readContextFile(root, file string) (source, error) {
	s, err := readContextDir(file, rootPath(root, file))
	if err != nil {
		return source{}, fmt.Errorf("reading context file %s: %w", file, err)
	}
	return s, nil
}

// readContextDir reads a context.sh and the token: ONEGATE_TOKEN or TOKENTXT
// in it, else the token.txt beside it (one-context's order).
func readContextDir(name, contextSh string) (source, error) {
	data, err := os.ReadFile(contextSh)
	if err != nil {
		return source{}, errors.New(describeReadErr("context.sh", err))
	}
	vars, err := Parse(data)
	if err != nil {
		return source{}, fmt.Errorf("context.sh: %w", err)
	}
	s := source{name: name, vars: vars, endpoint: vars[KeyOneGateEndpoint], vmid: vars[KeyVMID]}
	for _, k := range []string{KeyOneGateToken, KeyTokenTxt} {
		if t := strings.TrimSpace(vars[k]); t != "" {
			s.token = t
			return s, nil
		}
	}
	tok, err := os.ReadFile(filepath.Join(filepath.Dir(contextSh), "token.txt"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.tokenHint = " (no ONEGATE_TOKEN, no token.txt)"
	case err != nil:
		return source{}, errors.New(describeReadErr("token.txt", err))
	default:
		s.token = string(tok)
	}
	return s, nil
}
