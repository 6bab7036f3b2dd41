package dockersandboxtest

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/paddockdev/paddock/internal/testenv"
)

func TestRootFS(t *testing.T) {
	bb, err := Busybox()
	testenv.Need(t, "docker", err) // the image is only needed with Docker
	data, err := RootFS(bb)
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]*tar.Header{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		entries[strings.TrimSuffix(h.Name, "/")] = h
	}
	if h := entries["bin/busybox"]; h == nil || h.Typeflag != tar.TypeReg || h.Mode != 0o755 || h.Size < 100_000 {
		t.Errorf("bin/busybox: %+v", h)
	}
	for _, applet := range []string{"bin/sh", "bin/ps", "usr/bin/env", "usr/bin/setsid", "bin/sleep"} {
		if h := entries[applet]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "/bin/busybox" {
			t.Errorf("%s: %+v", applet, h)
		}
	}
	for _, dir := range []string{"tmp", "workspace", "etc"} {
		if h := entries[dir]; h == nil || h.Typeflag != tar.TypeDir {
			t.Errorf("%s: %+v", dir, h)
		}
	}
	// The sandbox tests check that no home directory is visible.
	for _, absent := range []string{"root", "home"} {
		if entries[absent] != nil {
			t.Errorf("%s is in the image", absent)
		}
	}
	if h := entries["etc/passwd"]; h == nil {
		t.Error("no /etc/passwd")
	}
}

func TestBusyboxRefusesADynamicBinary(t *testing.T) {
	t.Setenv(BusyboxEnv, "/bin/ls")
	if _, err := Busybox(); !errors.Is(err, ErrNoBusybox) || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("Busybox() = %v, want ErrNoBusybox saying the binary is dynamic", err)
	}
	t.Setenv(BusyboxEnv, "/no/such/busybox")
	if _, err := Busybox(); !errors.Is(err, ErrNoBusybox) {
		t.Errorf("Busybox() = %v, want ErrNoBusybox", err)
	}
}
