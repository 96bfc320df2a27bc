// Package kubeconfig is the wire contract between `onekube-flow kubeconfig`
// and the masters' serve loop: who is authorized (the CONTEXT list), what a
// request and an answer look like in a master's USER_TEMPLATE, the sealed
// payload, and age sealing itself. Everything here parses text that others
// can write (any VM of the service can rewrite a master's USER_TEMPLATE),
// so every parser is strict, bounded and fuzzed, and none of them decides
// anything: the master decides from the CONTEXT list, the CLI from what
// it asked for. See docs/kubeconfig.md.
package kubeconfig
