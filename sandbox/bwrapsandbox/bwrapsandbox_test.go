package bwrapsandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockdev/paddock/internal/testenv"
	"github.com/paddockdev/paddock/sandbox/driver"
)

var bg = context.Background()

func newSandbox(t *testing.T, spec driver.Spec) *Sandbox {
	t.Helper()
	testenv.Need(t, "bwrap", Probe(bg, ""))
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	s, err := New(bg, dir, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func run(ctx context.Context, t *testing.T, s *Sandbox, env []string, script string) (*driver.Result, string) {
	t.Helper()
	var out bytes.Buffer
	res, err := s.Exec(ctx, &driver.Command{Argv: []string{"/bin/sh", "-c", script}, Dir: "sub", Env: env, Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	return res, out.String()
}

func TestExecIsolated(t *testing.T) {
	t.Setenv("PADDOCK_HOST_SECRET", "leak-me")
	s := newSandbox(t, driver.Spec{Env: map[string]string{"FROM_SPEC": "spec"}})
	tests := []struct {
		name, script, want string
		code               int
	}{
		{"cwd and env", `pwd; echo "$GREETING $FROM_SPEC [$PADDOCK_HOST_SECRET]"`, "/workspace/sub\nhi spec []\n", 0},
		{"exit code", `exit 7`, "", 7},
		{"only loopback", `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '`, "lo\n", 0},
		{"host home hidden", `ls /root /home 2>/dev/null; echo done`, "done\n", 0},
		{"system read-only", `touch /usr/x 2>/dev/null && echo wrote || echo refused`, "refused\n", 0},
		{"own pid namespace", `echo $$`, "2\n", 0},
		{"work dir writable", `echo data > f && cat f`, "data\n", 0},
		{"private tmp", `ls -A /tmp | wc -l`, "0\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, out := run(bg, t, s, []string{"GREETING=hi"}, tt.script)
			if out != tt.want || res.ExitCode != tt.code {
				t.Errorf("output %q code %d, want %q code %d", out, res.ExitCode, tt.want, tt.code)
			}
		})
	}
	if data, err := os.ReadFile(filepath.Join(s.WorkDir(), "sub", "f")); err != nil || string(data) != "data\n" {
		t.Errorf("write inside the sandbox is not in the work directory: %q %v", data, err)
	}
}

func TestCancelKillsEverything(t *testing.T) {
	s := newSandbox(t, driver.Spec{})
	marker := fmt.Sprintf("1000.%d", time.Now().UnixNano()%1000000)
	ctx, cancel := context.WithTimeout(bg, 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, _ := run(ctx, t, s, nil, `sleep `+marker+` & setsid sleep `+marker+` & ( trap '' TERM; sleep `+marker+` ) & wait`)
	if !res.Killed || time.Since(start) > 5*time.Second {
		t.Errorf("killed=%v after %v", res.Killed, time.Since(start))
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := testenv.ProcessesWith(marker)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes survived the cancel: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSpecRefusals(t *testing.T) {
	testenv.Need(t, "bwrap", Probe(bg, ""))
	dir := t.TempDir()
	for _, spec := range []driver.Spec{{MemoryBytes: 1 << 30}, {CPUs: 1}, {PIDs: 10, MemoryBytes: 1 << 30}} {
		if _, err := New(bg, dir, spec, nil); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("New(%+v) = %v, want ErrUnsupported", spec, err)
		}
	}
	if _, err := New(bg, dir, driver.Spec{PIDs: -1}, nil); err == nil {
		t.Error("a negative PIDs limit was accepted")
	}
	if _, err := New(bg, dir, driver.Spec{Writable: []string{"relative"}}, nil); err == nil {
		t.Error("a relative writable path was accepted")
	}
	if err := Probe(bg, "/nonexistent/bwrap"); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "not found") {
		t.Errorf("Probe of a missing binary: %v", err)
	}
}

func TestNetworkAllowed(t *testing.T) {
	s := newSandbox(t, driver.Spec{Network: true})
	_, out := run(bg, t, s, nil, `tail -n +3 /proc/net/dev | wc -l`)
	if strings.TrimSpace(out) == "1" {
		t.Errorf("with Network the sandbox still sees only loopback")
	}
}

func TestKernelAtLeast(t *testing.T) {
	for _, tt := range []struct {
		release string
		want    bool
	}{
		{"5.14.0", true}, {"5.13.19-generic", false}, {"6.1.0-18-amd64", true},
		{"6.18.44-fc-v595", true}, {"4.19.0", false}, {"5.15", true}, {"5.14rc1", true},
		{"10.0.0", true}, {"", false}, {"garbage", false}, {"x.y", false},
	} {
		if got := kernelAtLeast(tt.release, 5, 14); got != tt.want {
			t.Errorf("kernelAtLeast(%q, 5, 14) = %v, want %v", tt.release, got, tt.want)
		}
	}
}

// TestPIDsLimit checks that the limit is exact: with bubblewrap's init and
// the shell, a limit of 6 leaves room for 4 more processes, not 5.
func TestPIDsLimit(t *testing.T) {
	testenv.Need(t, "bwrap", Probe(bg, ""))
	if _, err := pidsLimiter(); err != nil {
		t.Skipf("PIDs limits unavailable here (TestUnprivileged runs this test as an unprivileged user): %v", err)
	}
	sb, err := New(bg, t.TempDir(), driver.Spec{PIDs: 6}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := func(sleeps int) string {
		script := strings.Repeat("sleep 1 & ", sleeps) + "echo ok; wait"
		var out strings.Builder
		if _, err := sb.Exec(bg, &driver.Command{Argv: []string{"sh", "-c", script}, Stdout: &out, Stderr: &out}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if out := run(4); out != "ok\n" {
		t.Errorf("4 more processes under a limit of 6: %q, want ok", out)
	}
	if out := run(5); !strings.Contains(out, "fork") {
		t.Errorf("5 more processes under a limit of 6 all started: %q", out)
	}
}
