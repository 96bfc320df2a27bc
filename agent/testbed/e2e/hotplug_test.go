//go:build realbed

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/testbed"
	"github.com/onekube/onekube/context/onegatesim"
)

// TestServiceDiskHotplug: a VM of a service attaches an image to itself
// through OneGate, as the upgrade executor will, and the bed plugs it in:
// the device appears after the attach answered, is found by its label and
// mounted read-only; the VM reads its DISK_ID in the extended service
// document (OneGate's VM document has no DISK) and detaches it, and the
// device is gone.
func TestServiceDiskHotplug(t *testing.T) {
	b := newBed(t)
	s := startService(t, b, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var info onegatesim.VMInfo
	waitUntil(t, time.Minute, "the master VM", func() bool {
		vms := s.Sim.RoleVMs(s.ID, "master")
		if len(vms) == 1 && s.VM(vms[0].ID) != nil {
			info = vms[0]
			return true
		}
		return false
	})
	vm := s.VM(info.ID)

	// A small image labelled as the bundle.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "fs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fs", "onekube-bundle.json"), []byte(`{"kubernetesVersion":"v1.37.2","files":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(dir, "bundle.img")
	if out, err := exec.Command("mkfs.ext4", "-q", "-L", testbed.BundleLabel, "-d", filepath.Join(dir, "fs"), img, "4M").CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	imageID := s.Sim.CreateImage(onegatesim.Image{Name: "onekube-bundle-v1.37.2", Source: img})

	client := &http.Client{Transport: &http.Transport{DialContext: b.DialContext}, Timeout: 10 * time.Second}
	onegate := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, fmt.Sprintf("http://%s:%d%s", testbed.OneGateAddr, testbed.OneGatePort, path), strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-ONEGATE-TOKEN", info.Token.Reveal())
		req.Header.Set("X-ONEGATE-VMID", strconv.Itoa(info.ID))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	action := fmt.Sprintf("/vms/%d/action", info.ID)
	blkid := func() string {
		out, _ := vm.Run(ctx, "blkid", "-L", testbed.BundleLabel)
		return strings.TrimSpace(out)
	}
	if dev := blkid(); dev != "" {
		t.Fatalf("a bundle before the attach: %q", dev)
	}
	if code, body := onegate("POST", action, fmt.Sprintf(`{"action":{"perform":"attachdisk","params":"DISK=[IMAGE_ID=%d]"}}`, imageID)); code != 204 {
		t.Fatalf("attachdisk = %d %q", code, body)
	}
	waitUntil(t, 10*time.Second, "the bundle device", func() bool { return blkid() == "/dev/vdb" })
	if out, err := vm.Run(ctx, "sh", "-c", "mkdir -p /mnt/b && mount -o ro LABEL="+testbed.BundleLabel+" /mnt/b && cat /mnt/b/onekube-bundle.json && umount /mnt/b"); err != nil || !strings.Contains(out, `"kubernetesVersion":"v1.37.2"`) {
		t.Fatalf("mount by label: %v\n%s", err, out)
	}

	// The DISK_ID: not in OneGate's VM document, in the extended service.
	if _, body := onegate("GET", "/vm", ""); strings.Contains(body, "DISK") {
		t.Errorf("GET /vm shows DISK: %s", body)
	}
	_, body := onegate("GET", "/service?extended=true", "")
	var doc struct {
		SERVICE struct {
			Roles []struct {
				Nodes []struct {
					VMInfo struct {
						VM struct {
							ID       string
							TEMPLATE struct{ DISK json.RawMessage }
						}
					} `json:"vm_info"`
				}
			} `json:"roles"`
		}
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	diskID := ""
	for _, r := range doc.SERVICE.Roles {
		for _, n := range r.Nodes {
			if n.VMInfo.VM.ID != strconv.Itoa(info.ID) {
				continue
			}
			var one struct{ DISK_ID, IMAGE_ID, TARGET string } //nolint:revive // oned's names
			var many []struct{ DISK_ID, IMAGE_ID, TARGET string }
			if json.Unmarshal(n.VMInfo.VM.TEMPLATE.DISK, &many) != nil {
				_ = json.Unmarshal(n.VMInfo.VM.TEMPLATE.DISK, &one)
				many = append(many, one)
			}
			for _, d := range many {
				if d.IMAGE_ID == strconv.Itoa(imageID) && d.TARGET == "vdb" {
					diskID = d.DISK_ID
				}
			}
		}
	}
	if diskID == "" {
		t.Fatalf("no DISK of image %d in the extended service document:\n%.3000s", imageID, body)
	}
	if code, body := onegate("POST", action, `{"action":{"perform":"detachdisk","params":`+diskID+`}}`); code != 204 {
		t.Fatalf("detachdisk %s = %d %q", diskID, code, body)
	}
	waitUntil(t, 10*time.Second, "the bundle device gone", func() bool { return blkid() == "" })
	if out, err := vm.Run(ctx, "mount", "-o", "ro", "/dev/vdb", "/mnt/b"); err == nil || !strings.Contains(out, "does not exist") {
		t.Errorf("mount of a detached disk: %v %q", err, out)
	}
}
