package testbed

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// logTail bounds each log in Logs: the API server alone writes megabytes.
const logTail = 6000

// Logs gathers the logs of every process of every VM, the last logTail
// bytes of each, with the path of the whole file: vminit, fakenode, the
// systemctl stub and every container. They are read from the VMs' disks,
// so they survive a powered-off VM.
func (b *Bed) Logs() string {
	var out strings.Builder
	for _, vm := range b.VMs() {
		out.WriteString(vm.Logs())
	}
	return out.String()
}

// Logs gathers one VM's logs (see Bed.Logs).
func (vm *VM) Logs() string {
	var out strings.Builder
	vm.mu.Lock()
	boots := append([]string{}, vm.output...)
	if vm.h != nil {
		boots = append(boots, vm.h.output.String())
	}
	vm.mu.Unlock()
	for i, o := range boots {
		fmt.Fprintf(&out, "=== VM %s: vminit, boot %d\n%s\n", vm.Spec.Name, i+1, tail(o))
	}
	root := filepath.Join(vm.dir, "disk", "var", "upper", "log")
	var files []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		rel, _ := filepath.Rel(root, f)
		fmt.Fprintf(&out, "=== VM %s: /var/log/%s (%s)\n%s\n", vm.Spec.Name, rel, f, tail(string(data)))
	}
	return out.String()
}

func tail(s string) string {
	if len(s) <= logTail {
		return s
	}
	return fmt.Sprintf("[... %d bytes before]\n%s", len(s)-logTail, s[len(s)-logTail:])
}
