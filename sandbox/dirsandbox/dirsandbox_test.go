package dirsandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockdev/paddock/sandbox/driver"
)

func run(ctx context.Context, t *testing.T, s *Sandbox, dir string, env []string, argv ...string) (*driver.Result, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	res, err := s.Exec(ctx, &driver.Command{Argv: argv, Dir: dir, Env: env, Stdout: &out, Stderr: &errb})
	if err != nil {
		t.Fatal(err)
	}
	return res, out.String(), errb.String()
}

func TestExec(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	host := map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/u", "AWS_SECRET_ACCESS_KEY": "leak-me"}
	s, err := New(dir, driver.Spec{Network: true}, &Options{Getenv: func(k string) string { return host[k] }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	res, out, _ := run(ctx, t, s, "sub", []string{"GREETING=hi"}, "sh", "-c", `pwd; echo "$GREETING"; echo "[$AWS_SECRET_ACCESS_KEY]"; echo "$HOME"; exit 4`)
	want := filepath.Join(dir, "sub") + "\nhi\n[]\n/home/u\n"
	if out != want || res.ExitCode != 4 || res.Killed {
		t.Errorf("got %q code %d killed %v, want %q code 4", out, res.ExitCode, res.Killed, want)
	}

	// The command's PATH decides where programs come from, never ".".
	os.WriteFile(filepath.Join(dir, "evil"), []byte("#!/bin/sh\necho evil\n"), 0o755)
	if _, err := s.Exec(ctx, &driver.Command{Argv: []string{"evil"}, Dir: ".", Env: []string{"PATH=:" + "/nonexistent"}, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("a program in the work dir ran through an empty PATH entry: %v", err)
	}

	c, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, _, _ = run(c, t, s, ".", nil, "sh", "-c", "sleep 30 & sleep 30")
	if !res.Killed || time.Since(start) > 3*time.Second {
		t.Errorf("cancel: killed=%v after %v", res.Killed, time.Since(start))
	}

	if _, err := s.Exec(ctx, &driver.Command{Argv: []string{"true"}, Dir: "../..", Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("a working directory outside the sandbox: %v", err)
	}
	if _, err := New(filepath.Join(dir, "missing"), driver.Spec{Network: true}, nil); err == nil {
		t.Error("New on a missing directory succeeded")
	}
	for _, spec := range []driver.Spec{{}, {Network: true, MemoryBytes: 1 << 20}, {Network: true, PIDs: 10}, {Network: true, CPUs: 1}} {
		if _, err := New(dir, spec, nil); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("New(%+v) = %v, want ErrUnsupported: dirsandbox cannot honour it", spec, err)
		}
	}
}
