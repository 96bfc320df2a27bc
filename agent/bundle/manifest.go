// Package bundle is the air-gapped upgrade bundle (docs/upgrades.md): an
// OpenNebula image whose filesystem is labelled ONEKUBE-BUNDLE and holds
// onekube-bundle.json, the release's kubeadm, kubelet and kubectl, and the
// control-plane images as archives. The manifest type is shared by the
// appliance's make target, which writes it, and the node executor, which
// parses it strictly and checks every file before using any.
package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/onekube/onekube/agent/kversion"
)

// Label is the filesystem label the node executor mounts the bundle by.
const Label = "ONEKUBE-BUNDLE"

// ManifestName is the manifest's path at the filesystem's root.
const ManifestName = "onekube-bundle.json"

// Binaries are the executables a bundle must carry, and the only ones it
// may: the executor installs exactly these.
var Binaries = []string{"bin/kubeadm", "bin/kubelet", "bin/kubectl"}

// Limits on what a manifest may hold: a release has a dozen images at
// most, and a manifest far beyond that is not one.
const (
	MaxManifestBytes = 64 << 10
	MaxImages        = 64
)

// Manifest is onekube-bundle.json.
type Manifest struct {
	KubernetesVersion string `json:"kubernetesVersion"`
	// Files maps a path relative to the bundle's root to the lowercase
	// hex sha256 of its content.
	Files map[string]string `json:"files"`
}

var (
	sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// imagePath: one flat archive per image, a plain name (no spaces, no
	// dot-files) so that it can never be read as an option by ctr.
	imagePath = regexp.MustCompile(`^images/[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.tar$`)
)

// Parse reads a manifest strictly: one JSON object, no unknown or
// duplicate fields, a released version, only the three binaries and image
// archives, every hash well formed. A manifest that fails here is never
// used for anything, so the error says what to fix in the build.
func Parse(data []byte) (Manifest, error) {
	if len(data) > MaxManifestBytes {
		return Manifest{}, fmt.Errorf("bundle manifest: %d bytes, more than %d", len(data), MaxManifestBytes)
	}
	if err := noDuplicateKeys(data); err != nil {
		return Manifest{}, fmt.Errorf("bundle manifest: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("bundle manifest: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Manifest{}, errors.New("bundle manifest: data after the JSON object")
	}
	if err := m.Validate(); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// Validate checks a manifest's content; Parse and Marshal call it.
func (m Manifest) Validate() error {
	if _, err := kversion.ParseVersion(m.KubernetesVersion); err != nil {
		return fmt.Errorf("bundle manifest: kubernetesVersion: %w", err)
	}
	images := 0
	for p, h := range m.Files {
		if !sha256Hex.MatchString(h) {
			return fmt.Errorf("bundle manifest: %q: sha256 must be 64 lowercase hex digits", p)
		}
		switch {
		case isBinary(p):
		case imagePath.MatchString(p) && path.Clean(p) == p:
			images++
		default:
			return fmt.Errorf("bundle manifest: file %q: only %s and images/NAME.tar are allowed", p, strings.Join(Binaries, ", "))
		}
	}
	for _, b := range Binaries {
		if _, ok := m.Files[b]; !ok {
			return fmt.Errorf("bundle manifest: %s missing", b)
		}
	}
	if images == 0 {
		return errors.New("bundle manifest: no images/*.tar: a node could not start the new control plane offline")
	}
	if images > MaxImages {
		return fmt.Errorf("bundle manifest: %d images, more than %d", images, MaxImages)
	}
	return nil
}

// Version is the manifest's release, which Validate has checked.
func (m Manifest) Version() kversion.Version {
	v, _ := kversion.ParseVersion(m.KubernetesVersion)
	return v
}

// Images lists the image archives, sorted, so imports run in one order.
func (m Manifest) Images() []string {
	var out []string
	for p := range m.Files {
		if strings.HasPrefix(p, "images/") {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Marshal renders the manifest as the make target writes it (sorted keys,
// indented, a final newline), after validating it.
func Marshal(m Manifest) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func isBinary(p string) bool {
	for _, b := range Binaries {
		if p == b {
			return true
		}
	}
	return false
}

// noDuplicateKeys refuses an object that names a key twice at any level:
// encoding/json keeps the last, so two readers could disagree on a hash.
func noDuplicateKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func(depth int) error
	walk = func(depth int) error {
		if depth > 4 {
			return errors.New("nested too deep")
		}
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return nil
		}
		switch d {
		case '{':
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				ks, _ := k.(string)
				if seen[ks] {
					return fmt.Errorf("key %q given twice", ks)
				}
				seen[ks] = true
				if err := walk(depth + 1); err != nil {
					return err
				}
			}
		case '[':
			for dec.More() {
				if err := walk(depth + 1); err != nil {
					return err
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	return walk(0)
}
