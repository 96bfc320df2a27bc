package onegate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DecodeVM decodes a GET /vm or GET /vms/:id body. It accepts every shape
// the servers send (reference §1.4, §1.5): scalars as strings or numbers,
// NIC lists as arrays or as a single object. STATE and LCM_STATE read as -1
// when absent. Errors name the field, never its value: USER_TEMPLATE holds
// join tokens.
func DecodeVM(data []byte) (*VM, error) {
	top, err := decodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("decoding VM: %w", err)
	}
	obj, ok := top["VM"].(map[string]any)
	if !ok {
		return nil, errors.New("decoding VM: no VM object")
	}
	vm, err := decodeVMObject(obj, "VM")
	if err != nil {
		return nil, fmt.Errorf("decoding VM: %w", err)
	}
	return vm, nil
}

// DecodeService decodes a GET /service body, short (6.x/7.x: vm_info holds
// only IDs and names, running is null), 5.x (vm_info holds the filtered VM,
// running is a bool) or extended (vm_info holds the whole VM).
func DecodeService(data []byte) (*Service, error) {
	top, err := decodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("decoding service: %w", err)
	}
	obj, ok := top["SERVICE"].(map[string]any)
	if !ok {
		return nil, errors.New("decoding service: no SERVICE object")
	}
	s := &Service{Name: asString(obj["name"])}
	if s.ID, err = intField(obj, "id", "SERVICE", true); err != nil {
		return nil, fmt.Errorf("decoding service: %w", err)
	}
	if s.State, err = intField(obj, "state", "SERVICE", false); err != nil {
		return nil, fmt.Errorf("decoding service: %w", err)
	}
	for i, ro := range asObjects(obj["roles"]) {
		path := fmt.Sprintf("SERVICE.roles[%d]", i)
		r, err := decodeRole(ro, path)
		if err != nil {
			return nil, fmt.Errorf("decoding service: %w", err)
		}
		s.Roles = append(s.Roles, r)
	}
	return s, nil
}

func decodeRole(obj map[string]any, path string) (Role, error) {
	r := Role{Name: asString(obj["name"])}
	if r.Name == "" {
		return Role{}, fmt.Errorf("%s.name: missing", path)
	}
	var err error
	if r.Cardinality, err = intField(obj, "cardinality", path, false); err != nil {
		return Role{}, err
	}
	if r.State, err = intField(obj, "state", path, false); err != nil {
		return Role{}, err
	}
	for j, no := range asObjects(obj["nodes"]) {
		n, err := decodeNode(no, fmt.Sprintf("%s.nodes[%d]", path, j))
		if err != nil {
			return Role{}, err
		}
		r.Nodes = append(r.Nodes, n)
	}
	return r, nil
}

// decodeNode takes the VM ID from deploy_id, else vm_info.VM.ID; the VM
// itself only when vm_info carries a template (5.x or extended).
func decodeNode(obj map[string]any, path string) (Node, error) {
	n := Node{VMID: -1}
	if id, ok, err := asInt(obj["deploy_id"]); err != nil {
		return Node{}, fmt.Errorf("%s.deploy_id: %w", path, err)
	} else if ok && id >= 0 {
		n.VMID = id
	}
	info, _ := obj["vm_info"].(map[string]any)
	vmObj, _ := info["VM"].(map[string]any)
	if vmObj != nil {
		_, hasUT := vmObj["USER_TEMPLATE"]
		_, hasT := vmObj["TEMPLATE"]
		if hasUT || hasT {
			vm, err := decodeVMObject(vmObj, path+".vm_info.VM")
			if err != nil {
				return Node{}, err
			}
			n.VM = vm
			if n.VMID < 0 {
				n.VMID = vm.ID
			}
		} else if n.VMID < 0 {
			id, err := intField(vmObj, "ID", path+".vm_info.VM", true)
			if err != nil {
				return Node{}, err
			}
			n.VMID = id
		}
	}
	if n.VMID < 0 {
		return Node{}, fmt.Errorf("%s: no VM ID (deploy_id or vm_info.VM.ID)", path)
	}
	return n, nil
}

func decodeVMObject(obj map[string]any, path string) (*VM, error) {
	vm := &VM{Name: asString(obj["NAME"]), State: -1, LCMState: -1, UserTemplate: map[string]string{}}
	var err error
	if vm.ID, err = intField(obj, "ID", path, true); err != nil {
		return nil, err
	}
	if _, ok := obj["STATE"]; ok {
		if vm.State, err = intField(obj, "STATE", path, true); err != nil {
			return nil, err
		}
	}
	if _, ok := obj["LCM_STATE"]; ok {
		if vm.LCMState, err = intField(obj, "LCM_STATE", path, true); err != nil {
			return nil, err
		}
	}
	// Lenient: a missing or odd STIME is unknown (0), never a VM that
	// does not decode.
	if s, ok := scalar(obj["STIME"]); ok {
		vm.STime, _ = strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	}
	if ut, ok := obj["USER_TEMPLATE"].(map[string]any); ok {
		for k, v := range ut {
			// Vectors and repeated keys (objects, arrays) are left out.
			if s, ok := scalar(v); ok {
				vm.UserTemplate[k] = s
			}
		}
	}
	if t, ok := obj["TEMPLATE"].(map[string]any); ok {
		for _, nic := range asObjects(t["NIC"]) {
			vm.NICs = append(vm.NICs, decodeNIC(nic, false))
		}
		for _, nic := range asObjects(t["NIC_ALIAS"]) {
			vm.NICs = append(vm.NICs, decodeNIC(nic, true))
		}
		for _, d := range asObjects(t["DISK"]) {
			// Lenient: a disk without a readable DISK_ID is left out.
			id, ok, err := asInt(d["DISK_ID"])
			if !ok || err != nil {
				continue
			}
			img, ok, err := asInt(d["IMAGE_ID"])
			if !ok || err != nil {
				img = -1
			}
			vm.Disks = append(vm.Disks, Disk{ID: id, ImageID: img, Target: asString(d["TARGET"])})
		}
		if ctx, ok := t["CONTEXT"].(map[string]any); ok {
			vm.Context = map[string]string{}
			for k, v := range ctx {
				if s, ok := scalar(v); ok {
					vm.Context[k] = s
				}
			}
		}
	}
	return vm, nil
}

func decodeNIC(obj map[string]any, alias bool) NIC {
	n := NIC{
		Name:    asString(obj["NAME"]),
		IP:      asString(obj["IP"]),
		MAC:     asString(obj["MAC"]),
		Network: asString(obj["NETWORK"]),
		Alias:   alias,
	}
	for _, k := range []string{"IP6_GLOBAL", "IP6"} {
		if n.IP6 = asString(obj[k]); n.IP6 != "" {
			break
		}
	}
	n.IP6ULA = asString(obj["IP6_SITE"])
	return n
}

func decodeObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON document")
	}
	if top == nil {
		return nil, errors.New("not a JSON object")
	}
	return top, nil
}

// intField reads obj[key] as an int, from a string or a number.
func intField(obj map[string]any, key, path string, required bool) (int, error) {
	n, ok, err := asInt(obj[key])
	if err != nil {
		return 0, fmt.Errorf("%s.%s: %w", path, key, err)
	}
	if !ok && required {
		return 0, fmt.Errorf("%s.%s: missing", path, key)
	}
	return n, nil
}

var errNotInt = errors.New("not an integer")

// asInt accepts 49, "49", " 49 " and 49.0; ok is false for a missing or
// null value and for "".
func asInt(v any) (n int, ok bool, err error) {
	var s string
	switch x := v.(type) {
	case nil:
		return 0, false, nil
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
		if s == "" {
			return 0, false, nil
		}
	default:
		return 0, false, errNotInt
	}
	if i, err := strconv.ParseInt(s, 10, 0); err == nil {
		return int(i), true, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, false, errNotInt
	}
	return int(f), true, nil
}

// scalar renders a JSON scalar as the template's string form.
func scalar(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

func asString(v any) string {
	s, _ := scalar(v)
	return s
}

// asObjects reads a list of objects that may also arrive as one object (an
// XML-to-JSON conversion of a single element) or be absent.
func asObjects(v any) []map[string]any {
	switch x := v.(type) {
	case map[string]any:
		return []map[string]any{x}
	case []any:
		out := make([]map[string]any, 0, len(x))
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}
