package main

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// kubeletFlags are the kubelet command-line flags the unit would pass: the
// kubelet.service drop-in kubeadm installs runs
// `kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS`,
// with KUBELET_KUBEADM_ARGS from /var/lib/kubelet/kubeadm-flags.env (what
// nodeRegistration.kubeletExtraArgs and the node name become) and
// KUBELET_EXTRA_ARGS from /etc/default/kubelet.
type kubeletFlags map[string]string

// parseEnvFile reads a systemd EnvironmentFile: KEY=value or KEY="value"
// lines, # comments and blank lines skipped. It is strict about what it
// cannot read, so a config kubeadm writes wrongly fails loudly.
func parseEnvFile(data []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\"'") {
			return nil, fmt.Errorf("line %d: expected KEY=value", n)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		} else if strings.ContainsAny(v, "\"'") {
			return nil, fmt.Errorf("line %d: %s: unbalanced quotes", n, k)
		}
		out[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// parseFlags splits an argument string as systemd splits $VAR (on
// whitespace) and reads --name=value and --name value; a bare --flag is
// "true". Later flags win, as in the kubelet's flag parsing.
func parseFlags(args string, into kubeletFlags) error {
	words := strings.Fields(args)
	for i := 0; i < len(words); i++ {
		w := words[i]
		name, ok := strings.CutPrefix(w, "--")
		if !ok || name == "" {
			return fmt.Errorf("unexpected argument %q", w)
		}
		if k, v, eq := strings.Cut(name, "="); eq {
			into[k] = v
			continue
		}
		if i+1 < len(words) && !strings.HasPrefix(words[i+1], "--") {
			into[name] = words[i+1]
			i++
			continue
		}
		into[name] = "true"
	}
	return nil
}

// loadFlags combines kubeadm-flags.env and /etc/default/kubelet, either of
// which may be missing (nil data).
func loadFlags(kubeadmEnv, defaultKubelet []byte) (kubeletFlags, error) {
	f := kubeletFlags{}
	for _, src := range []struct {
		name, key string
		data      []byte
	}{
		{"kubeadm-flags.env", "KUBELET_KUBEADM_ARGS", kubeadmEnv},
		{"/etc/default/kubelet", "KUBELET_EXTRA_ARGS", defaultKubelet},
	} {
		if src.data == nil {
			continue
		}
		env, err := parseEnvFile(src.data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", src.name, err)
		}
		if err := parseFlags(env[src.key], f); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", src.name, src.key, err)
		}
	}
	return f, nil
}
