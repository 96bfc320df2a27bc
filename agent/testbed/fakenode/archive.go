package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// An image archive as `docker save`, `skopeo copy ... docker-archive:` and
// `ctr images export` (docker compatible) write it: a tar holding
// manifest.json, each image's config and its layers, each layer a tar
// (plain or gzip). This is what `ctr images import` accepts and what the
// upgrade bundle carries (appliance/bundle.sh). OCI layouts (index.json)
// are refused here with a clear error: the bundle never carries one.

// archiveImage is one entry of manifest.json.
type archiveImage struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// parseArchiveManifest decodes and checks manifest.json: at least one
// image, every tag a reference, every member a clean relative path.
func parseArchiveManifest(data []byte) ([]archiveImage, error) {
	var imgs []archiveImage
	if err := json.Unmarshal(data, &imgs); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	if len(imgs) == 0 {
		return nil, errors.New("manifest.json lists no image")
	}
	for i, im := range imgs {
		if len(im.RepoTags) == 0 {
			return nil, fmt.Errorf("manifest.json image %d has no RepoTags (an untagged image cannot be used by a pod)", i)
		}
		for _, t := range im.RepoTags {
			if err := checkRef(t); err != nil {
				return nil, fmt.Errorf("manifest.json image %d: %w", i, err)
			}
		}
		for _, m := range append([]string{im.Config}, im.Layers...) {
			if err := checkMember(m); err != nil {
				return nil, fmt.Errorf("manifest.json image %d: %w", i, err)
			}
		}
	}
	return imgs, nil
}

// checkMember refuses an archive member name that is empty, absolute or
// climbs out of the archive.
func checkMember(name string) error {
	if name == "" || strings.HasPrefix(name, "/") || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") {
		return fmt.Errorf("archive member %q is not a clean relative path", name)
	}
	return nil
}

// readMember returns one member's content from the tar at file.
func readMember(file, name string, limit int64) ([]byte, error) {
	var out []byte
	found := false
	err := walkTar(file, func(h *tar.Header, r io.Reader) (bool, error) {
		if path.Clean(h.Name) != name || h.Typeflag != tar.TypeReg {
			return false, nil
		}
		b, err := io.ReadAll(io.LimitReader(r, limit+1))
		if err != nil {
			return true, err
		}
		if int64(len(b)) > limit {
			return true, fmt.Errorf("%s is larger than %d bytes", name, limit)
		}
		out, found = b, true
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%s: not in the archive", name)
	}
	return out, nil
}

// walkTar calls f for each member until f says stop.
func walkTar(file string, f func(*tar.Header, io.Reader) (bool, error)) error {
	fh, err := os.Open(file)
	if err != nil {
		return err
	}
	defer fh.Close()
	tr := tar.NewReader(bufio.NewReader(fh))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s is not a tar archive: %w", file, err)
		}
		stop, err := f(h, tr)
		if err != nil || stop {
			return err
		}
	}
}

// importArchive unpacks every image of a docker-archive tar into the
// store and returns the references imported with their IDs.
func importArchive(file string, store imageStore) ([]imageMeta, error) {
	if _, err := os.Stat(file); err != nil {
		return nil, err
	}
	manifest, err := readMember(file, "manifest.json", 1<<20)
	if err != nil {
		if _, oci := readMember(file, "index.json", 1<<20); oci == nil {
			return nil, errors.New("an OCI layout archive: only docker-archive images (manifest.json) are played")
		}
		return nil, fmt.Errorf("unrecognized image format: %w", err)
	}
	imgs, err := parseArchiveManifest(manifest)
	if err != nil {
		return nil, err
	}
	var done []imageMeta
	for _, im := range imgs {
		config, err := readMember(file, im.Config, 16<<20)
		if err != nil {
			return done, err
		}
		if !json.Valid(config) {
			return done, fmt.Errorf("%s: the image config is not JSON", im.Config)
		}
		sum := sha256.Sum256(config)
		id := "sha256:" + hex.EncodeToString(sum[:])
		for _, ref := range im.RepoTags {
			dir, _ := store.dir(ref)
			if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
				return done, err
			}
			rootfs, err := os.MkdirTemp(filepath.Dir(dir), ".rootfs-")
			if err != nil {
				return done, err
			}
			size, err := unpackLayers(file, im.Layers, rootfs)
			if err == nil {
				err = store.put(ref, id, size, rootfs)
			}
			os.RemoveAll(rootfs)
			if err != nil {
				return done, fmt.Errorf("importing %s: %w", ref, err)
			}
			done = append(done, imageMeta{Ref: ref, ID: id, Size: size})
		}
	}
	return done, nil
}

// unpackLayers applies the layers in order onto rootfs.
func unpackLayers(file string, layers []string, rootfs string) (uint64, error) {
	var total uint64
	for _, l := range layers {
		found := false
		err := walkTar(file, func(h *tar.Header, r io.Reader) (bool, error) {
			if path.Clean(h.Name) != l || h.Typeflag != tar.TypeReg {
				return false, nil
			}
			found = true
			n, err := applyLayer(r, rootfs)
			total += n
			if err != nil {
				return true, fmt.Errorf("layer %s: %w", l, err)
			}
			return true, nil
		})
		if err != nil {
			return total, err
		}
		if !found {
			return total, fmt.Errorf("layer %s: not in the archive", l)
		}
	}
	return total, nil
}

// applyLayer unpacks one layer tar (plain or gzip) onto rootfs, honouring
// whiteouts. Nothing may land outside rootfs.
func applyLayer(r io.Reader, rootfs string) (uint64, error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return 0, err
		}
		defer gz.Close()
		br = bufio.NewReader(gz)
	}
	tr := tar.NewReader(br)
	var total uint64
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, fmt.Errorf("not a layer tar: %w", err)
		}
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		if name == "" {
			continue
		}
		dst := filepath.Join(rootfs, filepath.FromSlash(name))
		base := path.Base(name)
		if strings.HasPrefix(base, ".wh.") {
			_ = os.RemoveAll(filepath.Join(filepath.Dir(dst), strings.TrimPrefix(base, ".wh.")))
			continue
		}
		if err := noSymlinkParents(rootfs, name); err != nil {
			return total, err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return total, err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return total, err
			}
		case tar.TypeReg:
			_ = os.RemoveAll(dst)
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			if err != nil {
				return total, err
			}
			n, err := io.Copy(f, tr)
			total += uint64(n) //nolint:gosec // a byte count
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return total, err
			}
		case tar.TypeSymlink:
			_ = os.RemoveAll(dst)
			if err := os.Symlink(h.Linkname, dst); err != nil {
				return total, err
			}
		case tar.TypeLink:
			target := strings.TrimPrefix(path.Clean("/"+h.Linkname), "/")
			_ = os.RemoveAll(dst)
			if err := os.Link(filepath.Join(rootfs, filepath.FromSlash(target)), dst); err != nil {
				return total, err
			}
		default:
			// Devices and FIFOs: an image for the bed carries none.
		}
	}
}

// noSymlinkParents refuses a member whose parent directories include a
// symlink the layers made: writing through it could leave rootfs.
func noSymlinkParents(rootfs, name string) error {
	dir := rootfs
	parts := strings.Split(name, "/")
	for _, p := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, p)
		st, err := os.Lstat(dir)
		if err != nil {
			return nil // not there yet: MkdirAll makes a real directory
		}
		if st.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("layer member %s goes through the symlink %s", name, strings.TrimPrefix(dir, rootfs))
		}
	}
	return nil
}
