package onegatesim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
)

// Disk hot-plug through OneGate: POST /vms/:id/action with perform
// "attachdisk" calls vm.disk_attach(params) and "detachdisk"
// vm.disk_detach(params) (onegate-server.rb perform_action), which are
// one.vm.attach(id, template String) and one.vm.detach(id, disk_id Integer)
// (oca/ruby/opennebula/virtual_machine.rb). So attachdisk's params must be
// a template string such as "DISK=[IMAGE_ID=7]" and detachdisk's a JSON
// integer. oned numbers the new disk max(DISK_ID of the VM's disks and its
// context) + 1 and gives it the first free TARGET of its prefix
// (VirtualMachineDisks::set_up_attach). OneGate's own VM document
// (build_vm_hash) shows only NICs, never DISK: a guest reads its disks in
// GET /service?extended, whose nodes carry the whole vm.to_hash.

// Image is an image of the simulated datastore (`oneimage create`).
type Image struct {
	ID     int
	Name   string
	Source string // what the bed presents to the guest (a file)
	// DevPrefix is the image's DEV_PREFIX (default "vd").
	DevPrefix string
	// Template holds the image's other attributes, e.g.
	// ONEKUBE_BUNDLE_SHA256.
	Template map[string]string
	// State is oned's image state name (imageStates); "" is READY.
	State string
}

// Disk is a disk hot-plugged into a VM, as oned keeps it in TEMPLATE/DISK.
type Disk struct {
	DiskID  int
	ImageID int
	Image   string
	Target  string
	Source  string
}

// CreateImage registers an image and returns its ID (from 0, as oned).
func (s *Sim) CreateImage(img Image) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	img.ID = len(s.images)
	if img.DevPrefix == "" {
		img.DevPrefix = "vd"
	}
	s.images = append(s.images, img)
	return img.ID
}

// Disks lists the disks hot-plugged into VM vmid, by DISK_ID.
func (s *Sim) Disks(vmid int) []Disk {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.vms[vmid]
	if v == nil {
		return nil
	}
	return append([]Disk{}, v.disks...)
}

// OnDiskChange registers f, called in a goroutine of its own after every
// attach or detach with the VM's disks then: the hypervisor plugging the
// device into the guest, which happens after oned answered.
func (s *Sim) OnDiskChange(f func(vmid int, disks []Disk)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.diskHooks = append(s.diskHooks, f)
}

// diskAction performs attachdisk or detachdisk on v. Callers hold s.mu.
func (s *Sim) diskAction(v *vm, name string, params any) reply {
	var err error
	switch name {
	case "attachdisk":
		err = s.attachDisk(v, params)
	case "detachdisk":
		err = s.detachDisk(v, params)
	}
	if err != nil {
		s.o.Logf("onegatesim: VM %d %s refused: %v", v.id, name, err)
		return s.halt500(err.Error())
	}
	disks := append([]Disk{}, v.disks...)
	for _, f := range s.diskHooks {
		s.hookWG.Add(1)
		go func() {
			defer s.hookWG.Done()
			f(v.id, disks)
		}()
	}
	return reply{status: http.StatusNoContent}
}

func (s *Sim) attachDisk(v *vm, params any) error {
	tmpl, ok := params.(string)
	if !ok {
		return fmt.Errorf("[one.vm.attach] the disk template must be a String, got %s", rubyClass(params))
	}
	attrs, err := parseTemplate(tmpl)
	if err != nil {
		return fmt.Errorf("[one.vm.attach] Error parsing DISK template: %v", err)
	}
	var disk map[string]string
	for _, a := range attrs {
		if a.name == "DISK" && a.isVector() {
			if disk != nil {
				return fmt.Errorf("[one.vm.attach] only one DISK can be attached at a time")
			}
			disk = a.vector
		}
	}
	if disk == nil {
		return fmt.Errorf("[one.vm.attach] VM Template does not include a DISK attribute")
	}
	idText, ok := disk["IMAGE_ID"]
	if !ok {
		return fmt.Errorf("[one.vm.attach] the simulator resolves disks by IMAGE_ID only")
	}
	id, err := strconv.Atoi(idText)
	if err != nil || id < 0 || id >= len(s.images) {
		return fmt.Errorf("[one.vm.attach] Error getting image [%s]: image does not exist", idText)
	}
	img := s.images[id]
	maxID, used := 1, map[string]bool{"vda": true} // the OS disk and the context (DISK_ID 1 in contexts)
	if c, err := strconv.Atoi(v.context["DISK_ID"]); err == nil && c > maxID {
		maxID = c
	}
	for _, d := range v.disks {
		used[d.Target] = true
		maxID = max(maxID, d.DiskID)
	}
	target := disk["TARGET"]
	if target == "" {
		for c := 'a'; c <= 'z'; c++ {
			if t := img.DevPrefix + string(c); !used[t] {
				target = t
				break
			}
		}
	} else if used[target] {
		return fmt.Errorf("[one.vm.attach] Target %s is already in use.", target)
	}
	v.disks = append(v.disks, Disk{DiskID: maxID + 1, ImageID: id, Image: img.Name, Target: target, Source: img.Source})
	s.record(EventVMAction, v.svc.id, v.id, v.role.spec.name, fmt.Sprintf("disk %d attached (image %d)", maxID+1, id))
	return nil
}

func (s *Sim) detachDisk(v *vm, params any) error {
	n, ok := params.(json.Number) // a Float or a String reaches oned as the wrong XML-RPC type
	id, err := strconv.Atoi(string(n))
	if !ok || err != nil {
		return fmt.Errorf("[one.vm.detach] the disk ID must be an Integer, got %s", rubyClass(params))
	}
	for i, d := range v.disks {
		if d.DiskID == id {
			v.disks = append(v.disks[:i], v.disks[i+1:]...)
			s.record(EventVMAction, v.svc.id, v.id, v.role.spec.name, fmt.Sprintf("disk %d detached", id))
			return nil
		}
	}
	return fmt.Errorf("[one.vm.detach] VM %d does not have disk %d", v.id, id)
}

// diskAttrs are the hot-plugged disks as TEMPLATE/DISK vectors.
func diskAttrs(disks []Disk) []attr {
	sorted := append([]Disk{}, disks...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].DiskID < sorted[j].DiskID })
	var out []attr
	for _, d := range sorted {
		out = append(out, attr{name: "DISK", vector: map[string]string{
			"DISK_ID": strconv.Itoa(d.DiskID), "IMAGE_ID": strconv.Itoa(d.ImageID), "IMAGE": d.Image,
			"TARGET": d.Target, "SOURCE": d.Source, "TYPE": "FILE", "READONLY": "NO",
		}})
	}
	return out
}
