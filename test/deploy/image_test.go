package deploy

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// dockerManifest is an entry of a docker-save tarball's manifest.json.
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// imageConfig is the part of an image config this test checks.
type imageConfig struct {
	Architecture string    `json:"architecture"`
	OS           string    `json:"os"`
	Created      time.Time `json:"created"`
	Config       struct {
		User       string
		Entrypoint []string
		Cmd        []string
		WorkingDir string
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
	History []struct {
		Created time.Time `json:"created"`
	} `json:"history"`
}

// layerEntry is what the test expects of one file of the layer.
type layerEntry struct {
	Type     byte
	Mode     int64
	UID, GID int
}

// wantLayer is the root filesystem hack/image.sh lays out.
var wantLayer = map[string]layerEntry{
	"etc/":                              {tar.TypeDir, 0o755, 0, 0},
	"etc/group":                         {tar.TypeReg, 0o644, 0, 0},
	"etc/passwd":                        {tar.TypeReg, 0o644, 0, 0},
	"etc/ssl/":                          {tar.TypeDir, 0o755, 0, 0},
	"etc/ssl/certs/":                    {tar.TypeDir, 0o755, 0, 0},
	"etc/ssl/certs/ca-certificates.crt": {tar.TypeReg, 0o644, 0, 0},
	"home/":                             {tar.TypeDir, 0o755, 0, 0},
	"home/nonroot/":                     {tar.TypeDir, 0o700, 65532, 65532},
	"manager":                           {tar.TypeReg, 0o755, 0, 0},
	"tmp/":                              {tar.TypeDir, 0o1777, 0, 0},
}

// elfMachines maps GOARCH to the ELF machine of its binaries.
var elfMachines = map[string]elf.Machine{
	"amd64":   elf.EM_X86_64,
	"arm64":   elf.EM_AARCH64,
	"ppc64le": elf.EM_PPC64,
	"s390x":   elf.EM_S390,
}

// TestImage checks the docker tarball and the OCI layout `make image` wrote:
// their integrity and digest, the image config, every entry of the layer,
// and that the manager in it is a static binary of the right architecture
// that starts. (That two builds give the same digest is checked by
// `hack/image.sh --verify-reproducible`, which `make test-deploy` runs.)
func TestImage(t *testing.T) {
	digest := strings.TrimSpace(string(readOutput(t, imageDigest)))
	files := readTarball(t, imageTarball)
	platform := os.Getenv("IMAGE_PLATFORM")
	if platform == "" {
		platform = "linux/amd64"
	}
	wantOS, wantArch, _ := strings.Cut(platform, "/")

	t.Run("crane validates the tarball and agrees on the digest", func(t *testing.T) {
		if _, err := os.Stat(craneBinary); err != nil {
			t.Fatalf("%s is missing: `make image` installs it", craneBinary)
		}
		if out, err := exec.Command(craneBinary, "validate", "--tarball", imageTarball).CombinedOutput(); err != nil {
			t.Fatalf("crane validate --tarball: %v\n%s", err, out)
		}
		out, err := exec.Command(craneBinary, "digest", "--tarball", imageTarball).Output()
		if err != nil {
			t.Fatalf("crane digest --tarball: %v", err)
		}
		if got := strings.TrimSpace(string(out)); got != digest {
			t.Errorf("crane digest --tarball = %s, %s says %s", got, imageDigest, digest)
		}
	})

	var manifests []dockerManifest
	if err := json.Unmarshal(files["manifest.json"], &manifests); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if len(manifests) != 1 || len(manifests[0].Layers) != 1 {
		t.Fatalf("manifest.json = %+v, want one image of one layer", manifests)
	}
	m := manifests[0]
	if diff := cmp.Diff([]string{expectedImage()}, m.RepoTags); diff != "" {
		t.Errorf("RepoTags (-want +got):\n%s", diff)
	}
	configBytes := files[m.Config]
	if got := "sha256:" + sha256Hex(configBytes); got != m.Config {
		t.Fatalf("the config's content hashes to %s, its name is %s", got, m.Config)
	}
	var cfg imageConfig
	if err := json.Unmarshal(configBytes, &cfg); err != nil {
		t.Fatalf("image config: %v", err)
	}
	if cfg.OS != wantOS || cfg.Architecture != wantArch {
		t.Errorf("platform %s/%s, want %s", cfg.OS, cfg.Architecture, platform)
	}
	if cfg.Config.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", cfg.Config.User)
	}
	if diff := cmp.Diff([]string{"/manager"}, cfg.Config.Entrypoint); diff != "" || cfg.Config.Cmd != nil {
		t.Errorf("entrypoint %q cmd %q, want [/manager] and no cmd", cfg.Config.Entrypoint, cfg.Config.Cmd)
	}
	if cfg.Config.WorkingDir != "/" {
		t.Errorf("working dir %q, want /", cfg.Config.WorkingDir)
	}
	if cfg.Created.IsZero() || len(cfg.History) != 1 || !cfg.History[0].Created.Equal(cfg.Created) {
		t.Errorf("created %v, history %+v: want one fixed, non-zero time for both", cfg.Created, cfg.History)
	}

	compressed := files[m.Layers[0]]
	layer := gunzip(t, compressed)
	if len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != "sha256:"+sha256Hex(layer) {
		t.Fatalf("rootfs.diff_ids = %v, the layer hashes to sha256:%s", cfg.RootFS.DiffIDs, sha256Hex(layer))
	}

	t.Run("the OCI layout holds the same image", func(t *testing.T) {
		checkLayout(t, digest, m.Config, "sha256:"+sha256Hex(compressed))
	})

	contents := map[string][]byte{}
	got := map[string]layerEntry{}
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("layer: %v", err)
		}
		if _, dup := got[h.Name]; dup {
			t.Errorf("layer: %s appears twice", h.Name)
		}
		got[h.Name] = layerEntry{Type: h.Typeflag, Mode: h.Mode, UID: h.Uid, GID: h.Gid}
		if !h.ModTime.Equal(cfg.Created) {
			t.Errorf("layer: %s has mtime %v, want the image's created time %v", h.Name, h.ModTime, cfg.Created)
		}
		if h.Typeflag == tar.TypeReg {
			if contents[h.Name], err = io.ReadAll(tr); err != nil {
				t.Fatalf("layer: %s: %v", h.Name, err)
			}
		}
	}
	if diff := cmp.Diff(wantLayer, got); diff != "" {
		t.Errorf("layer entries (-want +got):\n%s", diff)
	}
	if !bytes.Contains(contents["etc/passwd"], []byte("\nnonroot:x:65532:65532:")) {
		t.Errorf("/etc/passwd has no nonroot user 65532:\n%s", contents["etc/passwd"])
	}
	if !bytes.Contains(contents["etc/group"], []byte("\nnonroot:x:65532:")) {
		t.Errorf("/etc/group has no nonroot group 65532:\n%s", contents["etc/group"])
	}
	if !bytes.Contains(contents["etc/ssl/certs/ca-certificates.crt"], []byte("-----BEGIN CERTIFICATE-----")) {
		t.Error("/etc/ssl/certs/ca-certificates.crt holds no certificate")
	}

	manager := filepath.Join(t.TempDir(), "manager")
	if err := os.WriteFile(manager, contents["manager"], 0o755); err != nil {
		t.Fatal(err)
	}
	t.Run("the manager is a static binary for the image's platform", func(t *testing.T) {
		f, err := elf.Open(manager)
		if err != nil {
			t.Fatalf("/manager is not an ELF binary: %v", err)
		}
		defer f.Close()
		if want, known := elfMachines[wantArch]; !known || f.Machine != want {
			t.Errorf("/manager is for %v, want %s", f.Machine, wantArch)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Error("/manager asks for a dynamic loader: it is not statically linked")
			}
		}
	})
	t.Run("the manager starts", func(t *testing.T) {
		if runtime.GOOS != wantOS || runtime.GOARCH != wantArch {
			t.Skipf("this host (%s/%s) cannot run a %s binary", runtime.GOOS, runtime.GOARCH, platform)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, manager, "--help").CombinedOutput()
		if err != nil {
			t.Fatalf("/manager --help: %v\n%s", err, out)
		}
		for _, flag := range []string{"-config", "-feature-gates", "-zap-log-level"} {
			if !bytes.Contains(out, []byte(flag)) {
				t.Errorf("/manager --help does not mention %s:\n%s", flag, out)
			}
		}
	})
}

// checkLayout checks the OCI image layout: one manifest, the image's digest,
// every blob intact, and the same config and layer as the docker tarball.
func checkLayout(t *testing.T, digest, config, layer string) {
	t.Helper()
	var layout struct {
		ImageLayoutVersion string `json:"imageLayoutVersion"`
	}
	if err := json.Unmarshal(readOutput(t, filepath.Join(imageLayout, "oci-layout")), &layout); err != nil || layout.ImageLayoutVersion != "1.0.0" {
		t.Errorf("oci-layout: version %q (%v), want 1.0.0", layout.ImageLayoutVersion, err)
	}
	type descriptor struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
		Size      int64  `json:"size"`
	}
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(readOutput(t, filepath.Join(imageLayout, "index.json")), &index); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	if len(index.Manifests) != 1 || index.Manifests[0].Digest != digest {
		t.Fatalf("index.json manifests = %+v, want one: %s", index.Manifests, digest)
	}
	blob := func(d descriptor) []byte {
		t.Helper()
		hexDigest, ok := strings.CutPrefix(d.Digest, "sha256:")
		if !ok {
			t.Fatalf("digest %q is not sha256", d.Digest)
		}
		data := readOutput(t, filepath.Join(imageLayout, "blobs", "sha256", hexDigest))
		if sha256Hex(data) != hexDigest || int64(len(data)) != d.Size {
			t.Fatalf("blob %s: %d bytes hashing to %s, want %d bytes", d.Digest, len(data), sha256Hex(data), d.Size)
		}
		return data
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(blob(index.Manifests[0]), &manifest); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	blob(manifest.Config)
	for _, l := range manifest.Layers {
		blob(l)
	}
	if manifest.Config.Digest != config || len(manifest.Layers) != 1 || manifest.Layers[0].Digest != layer {
		t.Errorf("the layout's image has config %s and layers %+v, the tarball's %s and [%s]",
			manifest.Config.Digest, manifest.Layers, config, layer)
	}
}

// readTarball reads every regular file of a tarball into memory.
func readTarball(t *testing.T, path string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(readOutput(t, path)))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if files[h.Name], err = io.ReadAll(tr); err != nil {
			t.Fatalf("%s: %s: %v", path, h.Name, err)
		}
	}
}

func gunzip(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("layer: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("layer: %v", err)
	}
	return out
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
