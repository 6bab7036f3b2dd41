// Package dockersandboxtest builds the tiny image that the tests of
// dockersandbox, its example and CI run sandboxes in, without a registry:
// a root file system made of Debian's busybox-static (one static binary
// and its applet links, /etc/passwd, /etc/group, an empty /workspace),
// imported into the engine with the Engine API's image import, as
// `docker import` does.
//
// The image is tagged with a hash of the busybox binary, so it is built
// once per engine and rebuilt when busybox changes.
package dockersandboxtest

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// Repository is the image repository of the test image.
const Repository = "paddock-sandbox-test"

// BusyboxEnv names an environment variable that overrides where the static
// busybox binary is looked for.
const BusyboxEnv = "PADDOCK_BUSYBOX"

var candidates = []string{"/bin/busybox", "/usr/bin/busybox"}

// ErrNoBusybox is returned when no static busybox binary is found.
var ErrNoBusybox = errors.New("dockersandboxtest: no static busybox binary (apt-get install busybox-static, or set " + BusyboxEnv + ")")

// Busybox returns the path of a statically linked busybox binary.
func Busybox() (string, error) {
	paths := candidates
	if p := os.Getenv(BusyboxEnv); p != "" {
		paths = []string{p}
	}
	var why []string
	for _, p := range paths {
		f, err := elf.Open(p)
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		static := true
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				static = false
			}
		}
		f.Close()
		if !static {
			why = append(why, p+" is dynamically linked")
			continue
		}
		return p, nil
	}
	return "", fmt.Errorf("%w: %s", ErrNoBusybox, strings.Join(why, "; "))
}

// RootFS returns the image's root file system as a tar stream, made from
// the static busybox binary at busybox.
func RootFS(busybox string) ([]byte, error) {
	bin, err := os.ReadFile(busybox)
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(busybox, "--list-full").Output()
	if err != nil {
		return nil, fmt.Errorf("dockersandboxtest: %s --list-full: %v", busybox, err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mtime := time.Unix(0, 0)
	dirs := []struct {
		name string
		mode int64
	}{{"bin", 0o755}, {"sbin", 0o755}, {"usr", 0o755}, {"usr/bin", 0o755}, {"usr/sbin", 0o755},
		{"etc", 0o755}, {"tmp", 0o1777}, {"var", 0o755}, {"var/tmp", 0o1777}, {"run", 0o755},
		{"workspace", 0o755}, {"proc", 0o755}, {"sys", 0o755}, {"dev", 0o755}}
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d.name + "/", Mode: d.mode, ModTime: mtime}); err != nil {
			return nil, err
		}
	}
	files := []struct {
		name string
		mode int64
		data []byte
	}{
		{"bin/busybox", 0o755, bin},
		{"etc/passwd", 0o644, []byte("root:x:0:0:root:/workspace:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")},
		{"etc/group", 0o644, []byte("root:x:0:\nnogroup:x:65534:\n")},
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: mtime}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	for _, applet := range strings.Fields(string(out)) {
		if applet == "bin/busybox" || strings.Contains(applet, "..") {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: applet, Linkname: "/bin/busybox", Mode: 0o777, ModTime: mtime}); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var mu sync.Mutex

// Image returns the reference of the test image in the engine cli talks
// to, importing it first when it is not there.
func Image(ctx context.Context, cli *client.Client) (string, error) {
	bb, err := Busybox()
	if err != nil {
		return "", err
	}
	bin, err := os.ReadFile(bb)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(bin)
	ref := Repository + ":busybox-" + hex.EncodeToString(sum[:6])
	mu.Lock()
	defer mu.Unlock()
	if _, err := cli.ImageInspect(ctx, ref); err == nil {
		return ref, nil
	} else if !cerrdefs.IsNotFound(err) {
		return "", fmt.Errorf("dockersandboxtest: inspect %s: %w", ref, err)
	}
	rootfs, err := RootFS(bb)
	if err != nil {
		return "", err
	}
	res, err := cli.ImageImport(ctx, client.ImageImportSource{Source: bytes.NewReader(rootfs), SourceName: "-"}, ref,
		client.ImageImportOptions{Changes: []string{"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "WORKDIR /workspace"}})
	if err != nil {
		return "", fmt.Errorf("dockersandboxtest: import %s: %w", ref, err)
	}
	defer res.Close()
	// The engine reports errors in the JSON stream, not the status.
	dec := json.NewDecoder(res)
	for {
		var msg struct {
			Error       string `json:"error"`
			ErrorDetail *struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&msg); err == io.EOF {
			break
		} else if err != nil {
			return "", fmt.Errorf("dockersandboxtest: import %s: %w", ref, err)
		}
		if msg.Error != "" {
			return "", fmt.Errorf("dockersandboxtest: import %s: %s", ref, msg.Error)
		}
	}
	if _, err := cli.ImageInspect(ctx, ref); err != nil {
		return "", fmt.Errorf("dockersandboxtest: %s missing after import: %w", ref, err)
	}
	return ref, nil
}
