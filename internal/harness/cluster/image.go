package cluster

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ociDescriptor is the part of an OCI descriptor this file reads.
type ociDescriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
}

// extractFile copies the file at path (such as "/manager") out of the one
// image of the OCI image layout in layoutDir (what `make image` writes to
// _output/image/oci) to dest, executable. Layers are read in order, so a
// later layer's copy wins, as in the image's file system.
func extractFile(layoutDir, path, dest string) error {
	var index struct {
		Manifests []ociDescriptor `json:"manifests"`
	}
	if err := readJSON(filepath.Join(layoutDir, "index.json"), &index); err != nil {
		return err
	}
	if len(index.Manifests) != 1 {
		return fmt.Errorf("cluster: %s/index.json lists %d manifests, want the one `make image` writes", layoutDir, len(index.Manifests))
	}
	var manifest struct {
		Layers []ociDescriptor `json:"layers"`
	}
	if err := readJSON(blobPath(layoutDir, index.Manifests[0].Digest), &manifest); err != nil {
		return err
	}
	want := strings.TrimPrefix(path, "/")
	var found []byte
	for _, layer := range manifest.Layers {
		data, err := os.ReadFile(blobPath(layoutDir, layer.Digest))
		if err != nil {
			return fmt.Errorf("cluster: reading layer: %w", err)
		}
		content, ok, err := fileInLayer(data, want)
		if err != nil {
			return fmt.Errorf("cluster: layer %s: %w", layer.Digest, err)
		}
		if ok {
			found = content
		}
	}
	if found == nil {
		return fmt.Errorf("cluster: the image in %s has no %s", layoutDir, path)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	tmp := dest + ".tmp"
	if err := os.WriteFile(tmp, found, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dest)
}

func blobPath(layoutDir, digest string) string {
	algorithm, hex, _ := strings.Cut(digest, ":")
	return filepath.Join(layoutDir, "blobs", algorithm, hex)
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cluster: %w (make image writes the OCI layout)", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("cluster: %s: %w", path, err)
	}
	return nil
}

// fileInLayer returns the content of the regular file name in a layer
// tarball, gzip-compressed or not.
func fileInLayer(layer []byte, name string) ([]byte, bool, error) {
	var r io.Reader = bytes.NewReader(layer)
	if bytes.HasPrefix(layer, []byte{0x1f, 0x8b}) {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, false, err
		}
		defer gz.Close()
		r = gz
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		if strings.TrimPrefix(h.Name, "./") != name || h.Typeflag != tar.TypeReg {
			continue
		}
		content, err := io.ReadAll(tr)
		return content, err == nil, err
	}
}
