// Command kubectl is a test stand-in for the few kubectl calls the agent
// makes. It checks the kubeconfig exists and that manifests parse, answers
// from the node registry the kubeadm stand-in keeps under
// $ONEKUBE_STANDIN_ROOT, and logs each invocation like the kubeadm stand-in.
//
//	kubectl --kubeconfig K apply -f FILE      (FILE may be "-" for stdin)
//	kubectl --kubeconfig K taint nodes NAME KEY[=VALUE]:EFFECT | KEY-   (or --all)
//	kubectl --kubeconfig K get nodes [NAME]
package main

import (
	"fmt"
	"io"
	"net/url"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/onekube/onekube/agent/internal/standin/env"
)

func main() {
	entry := env.NewEntry("kubectl", os.Args[1:])
	code := 0
	if err := run(os.Args[1:], entry, os.Stdin, os.Stdout); err != nil {
		entry.Error = err.Error()
		fmt.Fprintln(os.Stderr, "error:", err)
		code = 1
	}
	entry.ExitCode = code
	if err := entry.Append(); err != nil {
		fmt.Fprintf(os.Stderr, "kubectl stand-in: writing %s: %v\n", env.VarLog, err)
		code = 1
	}
	os.Exit(code)
}

// invocation is a parsed command line: global flags may appear anywhere.
type invocation struct {
	kubeconfig string
	words      []string // subcommand and its positional arguments
	file       string   // -f / --filename
	all        bool     // --all
	output     string   // -o
}

func parseArgs(args []string) (invocation, error) {
	var in invocation
	value := func(i *int, name string) (string, error) {
		if *i+1 >= len(args) {
			return "", fmt.Errorf("flag needs an argument: %s", name)
		}
		*i++
		return args[*i], nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		var err error
		switch {
		case a == "--kubeconfig":
			in.kubeconfig, err = value(&i, a)
		case len(a) > 13 && a[:13] == "--kubeconfig=":
			in.kubeconfig = a[13:]
		case a == "-f" || a == "--filename":
			in.file, err = value(&i, a)
		case len(a) > 11 && a[:11] == "--filename=":
			in.file = a[11:]
		case a == "-o" || a == "--output":
			in.output, err = value(&i, a)
		case a == "--all":
			in.all = true
		case a == "-n" || a == "--namespace":
			_, err = value(&i, a) // namespaces do not matter to the stand-in
		case a == "--overwrite":
		case len(a) > 1 && a[0] == '-' && a != "-":
			return in, fmt.Errorf("unknown flag: %s", a)
		default:
			in.words = append(in.words, a)
		}
		if err != nil {
			return in, err
		}
	}
	return in, nil
}

func run(args []string, e *env.Entry, stdin io.Reader, out io.Writer) error {
	in, err := parseArgs(args)
	if err != nil {
		return err
	}
	if len(in.words) == 0 {
		return fmt.Errorf("the stand-in implements apply, taint and get")
	}
	e.Command = in.words[0]
	root, err := env.Root()
	if err != nil {
		return err
	}
	if in.kubeconfig == "" {
		return fmt.Errorf("the stand-in needs --kubeconfig (there is no default cluster)")
	}
	kc := env.Resolve(root, in.kubeconfig)
	e.Kubeconfig = kc
	if _, err := os.Stat(kc); err != nil {
		return fmt.Errorf("stat %s: no such file or directory", in.kubeconfig)
	}
	api, err := connect(kc)
	if err != nil {
		return err
	}
	switch in.words[0] {
	case "apply":
		return apply(root, in, e, stdin, out)
	case "taint":
		return taint(api, in, e, out)
	case "get":
		return get(api, in, out)
	}
	return fmt.Errorf("unknown command %q for \"kubectl\"", in.words[0])
}

// connect reaches the API server the kubeconfig names, on the simulated
// network, with kubectl's words when nothing answers there.
func connect(kubeconfig string) (*env.APIServer, error) {
	b, err := os.ReadFile(kubeconfig)
	if err != nil {
		return nil, err
	}
	var kc struct {
		Clusters []struct {
			Cluster struct {
				Server string `json:"server"`
			} `json:"cluster"`
		} `json:"clusters"`
	}
	if err := yaml.Unmarshal(b, &kc); err != nil || len(kc.Clusters) == 0 {
		return nil, fmt.Errorf("error loading config file %q: no cluster in it", kubeconfig)
	}
	u, err := url.Parse(kc.Clusters[0].Cluster.Server)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("error loading config file %q: bad server URL", kubeconfig)
	}
	api, err := env.Dial(u.Host)
	if err != nil {
		return nil, fmt.Errorf("The connection to the server %s was refused - did you specify the right host or port?", u.Host) //nolint:staticcheck // kubectl's words
	}
	return api, nil
}
