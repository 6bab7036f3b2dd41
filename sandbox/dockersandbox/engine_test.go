package dockersandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/paddockdev/paddock/internal/testenv"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/sandbox/dockersandbox"
	"github.com/paddockdev/paddock/workspace"
)

// newSandbox returns a portable sandbox over a Docker sandbox whose
// container is removed at the end of the test.
func newSandbox(t *testing.T, dir string, spec sandbox.Spec) (*sandbox.Sandbox, *dockersandbox.Sandbox) {
	t.Helper()
	eng, image := engine(t)
	if dir == "" {
		dir = t.TempDir()
	}
	drv, err := dockersandbox.New(bg, eng, image, dir, spec, &dockersandbox.Options{RemoveOnClose: true})
	if err != nil {
		t.Fatal(err)
	}
	s := sandbox.New(drv, nil)
	t.Cleanup(func() { s.Close(bg) })
	return s, drv
}

func run(t *testing.T, s *sandbox.Sandbox, command string) string {
	t.Helper()
	res, err := s.Exec(bg, sandbox.ExecRequest{Command: command})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatalf("%s: %v\n%s%s", command, err, res.Stdout, res.Stderr)
	}
	return string(res.Stdout)
}

// TestKillInsideContainer proves that a timed-out command leaves no process
// in the container, listing the container's processes from inside it
// afterwards: a child, a grandchild ignoring SIGTERM, a child that left the
// session with setsid and cleared its environment, and a double-forked
// orphan in a new session.
func TestKillInsideContainer(t *testing.T) {
	s, _ := newSandbox(t, "", sandbox.Spec{})
	marker := fmt.Sprintf("4%d.25", time.Now().UnixNano()%1e8)
	script := fmt.Sprintf(`sleep %[1]s &
( trap '' TERM; sleep %[1]s ) &
env -i setsid sleep %[1]s &
( setsid sleep %[1]s & ) 
echo started; wait`, marker)
	start := time.Now()
	res, err := s.Exec(bg, sandbox.ExecRequest{Command: script, Timeout: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != sandbox.TimedOut || !strings.Contains(string(res.Stdout), "started") {
		t.Fatalf("reason %s, stdout %q stderr %q", res.Reason, res.Stdout, res.Stderr)
	}
	if took := time.Since(start); took > 6*time.Second {
		t.Errorf("Exec took %v", took)
	}
	ps := run(t, s, "ps -o pid,args")
	if strings.Contains(ps, marker) {
		t.Errorf("processes of the timed-out command survive in the container:\n%s", ps)
	}
	if !strings.Contains(ps, "ps -o pid,args") {
		t.Errorf("the process listing does not show itself, so it proves nothing:\n%s", ps)
	}
	if left := testenv.ProcessesWith(marker); len(left) > 0 {
		t.Errorf("host sees processes of the command: %v", left)
	}
}

// TestConcurrentExecsSurviveAKill checks that killing one command leaves
// another, running at the same time in the same container, alone.
func TestConcurrentExecsSurviveAKill(t *testing.T) {
	s, _ := newSandbox(t, "", sandbox.Spec{})
	var wg sync.WaitGroup
	var other *sandbox.ExecResult
	var otherErr error
	wg.Go(func() {
		other, otherErr = s.Exec(bg, sandbox.ExecRequest{Command: "sleep 3; echo survived"})
	})
	time.Sleep(300 * time.Millisecond)
	res, err := s.Exec(bg, sandbox.ExecRequest{Command: "sleep 60", Timeout: 500 * time.Millisecond})
	if err != nil || res.Reason != sandbox.TimedOut {
		t.Fatalf("%v %+v", err, res)
	}
	wg.Wait()
	if otherErr != nil || other.Err() != nil || string(other.Stdout) != "survived\n" {
		t.Errorf("the other command: %v %+v", otherErr, other)
	}
}

// TestHardenedFromInside checks the container's security settings as a
// command inside sees them.
func TestHardenedFromInside(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chown(dir, 4321, 4322); err != nil {
		t.Fatal(err)
	}
	s, drv := newSandbox(t, dir, sandbox.Spec{PIDs: 77, MemoryBytes: 96 << 20})
	cgroup := func(v1, v2 string) string {
		return fmt.Sprintf("cat /sys/fs/cgroup/%s 2>/dev/null || cat /sys/fs/cgroup/%s", v1, v2)
	}
	tests := []struct{ name, script, want string }{
		{"root read-only", "touch /pwned 2>/dev/null && echo wrote || echo refused", "refused\n"},
		{"root mounted ro", "grep -c '^[^ ]* / [^ ]* ro,' /proc/mounts", "1\n"},
		{"tmpfs", "for d in /tmp /var/tmp /run; do grep -c \"^tmpfs $d tmpfs\" /proc/mounts; done", "1\n1\n1\n"},
		{"tmp writable", "echo x > /tmp/f && cat /tmp/f", "x\n"},
		{"only loopback", "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '", "lo\n"},
		{"no capabilities", "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status | cut -f2 | sort -u", "0000000000000000\n"},
		{"no_new_privs", "grep NoNewPrivs /proc/self/status | cut -f2", "1\n"},
		{"pids limit", cgroup("pids/pids.max", "pids.max"), "77\n"},
		{"memory limit", cgroup("memory/memory.limit_in_bytes", "memory.max"), fmt.Sprintf("%d\n", 96<<20)},
		{"no swap", cgroup("memory/memory.memsw.limit_in_bytes", "memory.swap.max") + " || echo none", ""},
		{"nofile", "ulimit -n", fmt.Sprintf("%d\n", dockersandbox.DefaultNoFile)},
		{"uid of the work dir", "id -u; id -g", "4321\n4322\n"},
		{"cwd", "pwd", "/workspace\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, s, tt.script)
			if tt.name == "no swap" {
				// memory+swap equals memory (v1), or no swap at all (v2).
				if got != fmt.Sprintf("%d\n", 96<<20) && got != "0\n" && got != "none\n" {
					t.Errorf("memory+swap: %q", got)
				}
				return
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	run(t, s, "echo data > made-inside; chmod 640 made-inside")
	fi, err := os.Stat(filepath.Join(dir, "made-inside"))
	if err != nil {
		t.Fatal(err)
	}
	if uid, gid := owner(fi); uid != 4321 || gid != 4322 || fi.Mode().Perm() != 0o640 {
		t.Errorf("file made inside: owner %d:%d mode %v, want 4321:4322 0640", uid, gid, fi.Mode().Perm())
	}
	// The engine's own view agrees.
	eng, _ := engine(t)
	info, err := eng.Client().ContainerInspect(bg, drv.Name(), client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hc := info.Container.HostConfig
	if !hc.ReadonlyRootfs || string(hc.NetworkMode) != "none" || len(hc.CapDrop) != 1 || hc.CapDrop[0] != "ALL" ||
		hc.Memory != 96<<20 || hc.MemorySwap != 96<<20 || hc.NanoCPUs != 1e9 || hc.PidsLimit == nil || *hc.PidsLimit != 77 {
		t.Errorf("host config: ro %v net %s capdrop %v mem %d swap %d cpus %d", hc.ReadonlyRootfs, hc.NetworkMode, hc.CapDrop, hc.Memory, hc.MemorySwap, hc.NanoCPUs)
	}
}

// TestForkBomb checks that a fork bomb hits the pids limit, that the host
// can start processes all along, that the timeout kills it, and that the
// sandbox works afterwards with no process of the bomb left.
func TestForkBomb(t *testing.T) {
	s, _ := newSandbox(t, "", sandbox.Spec{PIDs: 48})
	marker := fmt.Sprintf("bomb%d", time.Now().UnixNano()%1e9)
	stop := make(chan struct{})
	hostErrs := make(chan error, 1)
	go func() {
		var err error
		defer func() { hostErrs <- err }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if e := osexec.Command("true").Run(); e != nil && err == nil {
				err = e
			}
		}
	}()
	start := time.Now()
	res, err := s.Exec(bg, sandbox.ExecRequest{Command: fmt.Sprintf(`: %s; b() { b | b & }; b; sleep 30; echo unreachable`, marker), Timeout: 3 * time.Second, MaxOutput: 4096})
	close(stop)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the bomb held Exec for %v", took)
	}
	if err := <-hostErrs; err != nil {
		t.Errorf("the host could not start a process during the bomb: %v", err)
	}
	if !strings.Contains(string(res.Stderr), "fork") {
		t.Errorf("no fork failed: the bomb did not reach the limit (stderr %q)", res.Stderr)
	}
	if strings.Contains(string(res.Stdout), "unreachable") {
		t.Errorf("reason %s: the command outlived its timeout", res.Reason)
	}
	// The sandbox works again, and the bomb is gone.
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := s.Exec(bg, sandbox.ExecRequest{Command: "ps -o pid,args"})
		if err == nil && res.Err() == nil && !strings.Contains(string(res.Stdout), marker) && strings.Count(string(res.Stdout), "\n") < 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox did not recover: %v %+v", err, res)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if left := testenv.ProcessesWith(marker); len(left) > 0 {
		t.Errorf("processes of the bomb survive: %v", left)
	}
}

// TestMemoryBomb checks that a command exceeding the memory limit is
// killed by the kernel and reported as out of memory.
func TestMemoryBomb(t *testing.T) {
	s, _ := newSandbox(t, "", sandbox.Spec{MemoryBytes: 48 << 20})
	res, err := s.Exec(bg, sandbox.ExecRequest{Command: `a=xxxxxxxxxxxxxxxx; while :; do a="$a$a"; done`, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != sandbox.OutOfMemory {
		t.Errorf("reason %s code %d, want %s", res.Reason, res.ExitCode, sandbox.OutOfMemory)
	}
	if out := run(t, s, "echo alive"); out != "alive\n" {
		t.Errorf("after the bomb: %q", out)
	}
	// A SIGKILL that is not the OOM killer's is not reported as OOM.
	res, err = s.Exec(bg, sandbox.ExecRequest{Command: "kill -KILL $$"})
	if err != nil || res.Reason == sandbox.OutOfMemory {
		t.Errorf("kill -KILL: %v %+v", err, res)
	}
}

// TestEnsureReuseAndRecreate checks the config hash: the same config reuses
// the container (starting it when stopped), another tag of the same image
// too; a changed config recreates it, but not while a command runs.
func TestEnsureReuseAndRecreate(t *testing.T) {
	eng, image := engine(t)
	cfg := dockersandbox.Config{Key: "reuse-" + t.Name(), Image: image, WorkDir: t.TempDir()}
	t.Cleanup(func() { eng.Remove(bg, dockersandbox.ContainerName(cfg.Key)) })
	c1, err := eng.EnsureContainer(bg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := eng.EnsureContainer(bg, cfg)
	if err != nil || c2.ID != c1.ID || c2.ConfigHash != c1.ConfigHash {
		t.Fatalf("same config: %v, id %s then %s", err, c1.ID, c2.ID)
	}
	alias := "paddock-sandbox-test:alias-" + fmt.Sprint(time.Now().UnixNano())
	if _, err := eng.Client().ImageTag(bg, client.ImageTagOptions{Source: image, Target: alias}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Client().ImageRemove(bg, alias, client.ImageRemoveOptions{}) })
	byAlias := cfg
	byAlias.Image = alias
	if c, err := eng.EnsureContainer(bg, byAlias); err != nil || c.ID != c1.ID {
		t.Errorf("another tag of the same image recreated the container: %v", err)
	}
	timeout := 0
	if _, err := eng.Client().ContainerStop(bg, c1.ID, client.ContainerStopOptions{Timeout: &timeout}); err != nil {
		t.Fatal(err)
	}
	c3, err := eng.EnsureContainer(bg, cfg)
	if err != nil || c3.ID != c1.ID {
		t.Fatalf("stopped container: %v, id %s", err, c3.ID)
	}
	if info, err := eng.Client().ContainerInspect(bg, c1.ID, client.ContainerInspectOptions{}); err != nil || !info.Container.State.Running {
		t.Errorf("not started again: %v", err)
	}

	// A command in flight blocks recreation.
	drv, err := dockersandbox.New(bg, eng, image, cfg.WorkDir, sandbox.Spec{}, &dockersandbox.Options{Key: cfg.Key})
	if err != nil {
		t.Fatal(err)
	}
	if drv.Name() != c1.Name {
		t.Fatalf("New made %s, want the same container %s", drv.Name(), c1.Name)
	}
	s := sandbox.New(drv, nil)
	ctx, cancel := context.WithCancel(bg)
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Exec(ctx, sandbox.ExecRequest{Command: "echo up; sleep 60", Stdout: &signalWriter{ch: started}})
	}()
	<-started
	changed := cfg
	changed.Env = map[string]string{"NEW": "1"}
	if _, err := eng.EnsureContainer(bg, changed); !errors.Is(err, dockersandbox.ErrBusy) {
		t.Errorf("recreate during an exec = %v, want ErrBusy", err)
	}
	cancel()
	<-done
	c4, err := eng.EnsureContainer(bg, changed)
	if err != nil || c4.ID == c1.ID || c4.ConfigHash == c1.ConfigHash {
		t.Fatalf("changed config: %v, id %s (was %s)", err, c4.ID, c1.ID)
	}
	if _, err := eng.Client().ContainerInspect(bg, c1.ID, client.ContainerInspectOptions{}); err == nil {
		t.Error("the old container is still there")
	}
}

type signalWriter struct {
	once sync.Once
	ch   chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.ch) })
	return len(p), nil
}

// TestRegistryReconcile deletes the registry file and checks that List
// finds the container again by its labels, and drops entries of containers
// removed behind its back.
func TestRegistryReconcile(t *testing.T) {
	testenv.Need(t, "docker", dockersandbox.Probe(bg))
	root := t.TempDir()
	eng, err := dockersandbox.Open(bg, workspace.Paths{StateRoot: root}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	_, image := engine(t)
	var names []string
	for _, k := range []string{"a", "b"} {
		c, err := eng.EnsureContainer(bg, dockersandbox.Config{Key: "reg-" + k, Image: image, WorkDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, c.Name)
		t.Cleanup(func() { eng.Client().ContainerRemove(bg, c.ID, client.ContainerRemoveOptions{Force: true}) })
	}
	path := dockersandbox.RegistryPath(workspace.Paths{StateRoot: root})
	var file dockersandbox.RegistryFile
	if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &file) != nil {
		t.Fatalf("registry: %v", err)
	}
	if file.Schema != dockersandbox.RegistrySchema || file.Version != 1 || len(file.Containers) != 2 {
		t.Fatalf("registry file: %+v", file)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	list, err := eng.List(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != names[0] || list[1].Name != names[1] || list[0].Key != "reg-a" || list[0].ConfigHash == "" || list[0].State != "running" {
		t.Fatalf("after deleting the registry, List = %+v", list)
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Contains(b, []byte(names[1])) {
		t.Errorf("the registry was not rewritten: %s %v", b, err)
	}
	// Removed behind the registry's back.
	if _, err := eng.Client().ContainerRemove(bg, names[0], client.ContainerRemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	list, err = eng.List(bg)
	if err != nil || len(list) != 1 || list[0].Name != names[1] {
		t.Errorf("after an outside removal, List = %+v %v", list, err)
	}
	// Another state root does not see these containers.
	other, err := dockersandbox.Open(bg, workspace.Paths{StateRoot: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if l, err := other.List(bg); err != nil || len(l) != 0 {
		t.Errorf("another state root lists %+v %v", l, err)
	}
	if err := other.Remove(bg, names[1]); !errors.Is(err, dockersandbox.ErrNotSandbox) {
		t.Errorf("another state root's Remove = %v, want ErrNotSandbox", err)
	}
	if _, err := other.EnsureContainer(bg, dockersandbox.Config{Key: "reg-b", Image: image, WorkDir: t.TempDir()}); !errors.Is(err, dockersandbox.ErrNotSandbox) {
		t.Errorf("another state root's EnsureContainer of the same key = %v, want ErrNotSandbox", err)
	}
}

// TestPrune uses a fake clock: a container idle past IdleHours is removed,
// a used one stays until it is older than MaxAgeDays.
func TestPrune(t *testing.T) {
	testenv.Need(t, "docker", dockersandbox.Probe(bg))
	_, image := engine(t)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	eng, err := dockersandbox.Open(bg, workspace.Paths{StateRoot: t.TempDir()}, &dockersandbox.EngineOptions{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	used, err := dockersandbox.New(bg, eng, image, t.TempDir(), sandbox.Spec{}, &dockersandbox.Options{Key: "prune-used"})
	if err != nil {
		t.Fatal(err)
	}
	idle, err := eng.EnsureContainer(bg, dockersandbox.Config{Key: "prune-idle", Image: image, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range []string{used.Name(), idle.Name} {
			eng.Client().ContainerRemove(bg, n, client.ContainerRemoveOptions{Force: true})
		}
	})
	s := sandbox.New(used, nil)
	rep, err := eng.Prune(bg, nil)
	if err != nil || len(rep.Removed) != 0 || len(rep.Failed) != 0 {
		t.Fatalf("fresh containers pruned: %+v %v", rep, err)
	}
	advance(20 * time.Hour)
	run(t, s, "true")
	advance(5 * time.Hour) // idle: 25h; used: 5h ago
	rep, err = eng.Prune(bg, nil)
	if err != nil || len(rep.Removed) != 1 || rep.Removed[0].Name != idle.Name || !strings.HasPrefix(rep.Removed[0].Reason, "idle") {
		t.Fatalf("after 25h: %+v %v", rep, err)
	}
	if list, _ := eng.List(bg); len(list) != 1 || list[0].Name != used.Name() {
		t.Errorf("List after prune = %+v", list)
	}
	// Used every day, the container still ages out after 7 days.
	for range 8 {
		advance(20 * time.Hour)
		run(t, s, "true")
	}
	rep, err = eng.Prune(bg, &dockersandbox.PruneOptions{IdleHours: 24, MaxAgeDays: 7})
	if err != nil || len(rep.Removed) != 1 || rep.Removed[0].Name != used.Name() || !strings.HasPrefix(rep.Removed[0].Reason, "age") {
		t.Fatalf("after 7 days: %+v %v", rep, err)
	}
	if l, _ := eng.List(bg); len(l) != 0 {
		t.Errorf("left: %+v", l)
	}
}

// TestUnsafeBindRefused checks, against the engine, that a Spec asking to
// write /etc is refused before any container is made.
func TestUnsafeBindRefused(t *testing.T) {
	eng, image := engine(t)
	dir := t.TempDir()
	for _, w := range []string{"/etc", "/var/run/docker.sock", "/", t.TempDir()} {
		_, err := dockersandbox.New(bg, eng, image, dir, sandbox.Spec{Writable: []string{w}}, &dockersandbox.Options{Key: "unsafe-bind"})
		if !errors.Is(err, dockersandbox.ErrInvalidConfig) {
			t.Errorf("Writable %s: %v, want ErrInvalidConfig", w, err)
		}
	}
	if _, err := eng.Client().ContainerInspect(bg, dockersandbox.ContainerName("unsafe-bind"), client.ContainerInspectOptions{}); err == nil {
		t.Error("a container was made")
	}
	// Inside an allowed root, Spec.Writable is bound at its own path.
	allowed := t.TempDir()
	s, err := dockersandbox.New(bg, eng, image, dir, sandbox.Spec{Writable: []string{allowed}},
		&dockersandbox.Options{Key: "allowed-bind", RemoveOnClose: true, Settings: dockersandbox.Settings{AllowedRoots: []string{allowed}}})
	if err != nil {
		t.Fatal(err)
	}
	ps := sandbox.New(s, nil)
	defer ps.Close(bg)
	run(t, ps, "echo w > "+allowed+"/f")
	if b, err := os.ReadFile(filepath.Join(allowed, "f")); err != nil || string(b) != "w\n" {
		t.Errorf("write through Spec.Writable: %q %v", b, err)
	}
}

func TestImageNotFound(t *testing.T) {
	eng, _ := engine(t)
	_, err := eng.EnsureContainer(bg, dockersandbox.Config{Key: "x", Image: "paddock-no-such-image:never", WorkDir: t.TempDir()})
	if !errors.Is(err, dockersandbox.ErrImageNotFound) {
		t.Errorf("EnsureContainer = %v, want ErrImageNotFound", err)
	}
}

// TestExecAfterRemove checks that a sandbox whose container was removed
// (by Prune, say) or stopped makes it again on its next Exec.
func TestExecAfterRemove(t *testing.T) {
	s, drv := newSandbox(t, "", sandbox.Spec{})
	eng, _ := engine(t)
	run(t, s, "echo kept > f")
	if err := eng.Remove(bg, drv.Name()); err != nil {
		t.Fatal(err)
	}
	if out := run(t, s, "cat f"); out != "kept\n" {
		t.Errorf("after Remove: %q", out)
	}
	timeout := 0
	if _, err := eng.Client().ContainerStop(bg, drv.Name(), client.ContainerStopOptions{Timeout: &timeout}); err != nil {
		t.Fatal(err)
	}
	if out := run(t, s, "echo again"); out != "again\n" {
		t.Errorf("after a stop: %q", out)
	}
}

// TestKillWhenPidsExhausted fills the pids limit with processes that do not
// die, so that not even the in-container killer can start: Exec must still
// kill them all (by restarting the container) and return.
func TestKillWhenPidsExhausted(t *testing.T) {
	s, _ := newSandbox(t, "", sandbox.Spec{PIDs: 16})
	marker := fmt.Sprintf("5%d.5", time.Now().UnixNano()%1e8)
	start := time.Now()
	res, err := s.Exec(bg, sandbox.ExecRequest{Command: fmt.Sprintf(`for i in $(seq 40); do sleep %s & done 2>/dev/null; wait`, marker), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != sandbox.TimedOut {
		t.Errorf("reason %s", res.Reason)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("Exec took %v", took)
	}
	if ps := run(t, s, "ps -o args"); strings.Contains(ps, marker) {
		t.Errorf("processes survive:\n%s", ps)
	}
	if left := testenv.ProcessesWith(marker); len(left) > 0 {
		t.Errorf("host sees processes of the command: %v", left)
	}
}

// TestSpecAndOptions checks Spec.Network, Spec.Env, Spec.CPUs and
// Options.PathPrepend from inside, and a refused network.
func TestSpecAndOptions(t *testing.T) {
	eng, image := engine(t)
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "bin"), 0o755)
	os.WriteFile(filepath.Join(dir, "bin", "hello"), []byte("#!/bin/sh\necho hello from bin\n"), 0o755)
	drv, err := dockersandbox.New(bg, eng, image, dir, sandbox.Spec{Network: true, Env: map[string]string{"FROM_SPEC": "spec"}, CPUs: 0.5},
		&dockersandbox.Options{RemoveOnClose: true, PathPrepend: []string{"/workspace/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	s := sandbox.New(drv, nil)
	defer s.Close(bg)
	got := run(t, s, `hello; echo "$FROM_SPEC"; echo "${PATH%%:*}"; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\n' ' '`)
	if !strings.HasPrefix(got, "hello from bin\nspec\n/workspace/bin\n") || !strings.Contains(got, "eth0") {
		t.Errorf("got %q, want the PATH entry used, the spec's env, and an eth0 interface", got)
	}
	info, err := eng.Client().ContainerInspect(bg, drv.Name(), client.ContainerInspectOptions{})
	if err != nil || info.Container.HostConfig.NanoCPUs != 5e8 || string(info.Container.HostConfig.NetworkMode) != "bridge" {
		t.Errorf("host config: %v", err)
	}
	for _, o := range []dockersandbox.Options{
		{Settings: dockersandbox.Settings{Network: "host"}},
		{Settings: dockersandbox.Settings{Network: "container:" + drv.Name()}},
		{PathPrepend: []string{"relative/bin"}},
	} {
		if _, err := dockersandbox.New(bg, eng, image, t.TempDir(), sandbox.Spec{Network: true}, &o); !errors.Is(err, dockersandbox.ErrInvalidConfig) {
			t.Errorf("options %+v: %v, want ErrInvalidConfig", o, err)
		}
	}
	if _, err := dockersandbox.New(bg, eng, image, t.TempDir(), sandbox.Spec{}, &dockersandbox.Options{Settings: dockersandbox.Settings{Network: "bridge"}}); !errors.Is(err, dockersandbox.ErrInvalidConfig) {
		t.Errorf("a network without Spec.Network: %v, want ErrInvalidConfig", err)
	}
}

// i386Exit42 is a whole i386 ELF program: exit(42) through int 0x80, the
// 32-bit system-call ABI, and a hlt (a fault) should that call fail.
func i386Exit42() []byte {
	code := []byte{
		0xb8, 1, 0, 0, 0, // mov eax, 1 (exit)
		0xbb, 42, 0, 0, 0, // mov ebx, 42
		0xcd, 0x80, // int 0x80
		0xf4, // hlt
	}
	const base, ehsize, phsize = 0x08048000, 52, 32
	b := make([]byte, 0, ehsize+phsize+len(code))
	le := func(v uint32, n int) {
		for i := range n {
			b = append(b, byte(v>>(8*i)))
		}
	}
	b = append(b, 0x7f, 'E', 'L', 'F', 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	le(2, 2)                  // e_type: executable
	le(3, 2)                  // e_machine: i386
	le(1, 4)                  // e_version
	le(base+ehsize+phsize, 4) // e_entry
	le(ehsize, 4)             // e_phoff
	le(0, 4)                  // e_shoff
	le(0, 4)                  // e_flags
	le(ehsize, 2)             // e_ehsize
	le(phsize, 2)             // e_phentsize
	le(1, 2)                  // e_phnum
	le(0, 2)                  // e_shentsize
	le(0, 2)                  // e_shnum
	le(0, 2)                  // e_shstrndx
	size := uint32(ehsize + phsize + len(code))
	le(1, 4)      // p_type: load
	le(0, 4)      // p_offset
	le(base, 4)   // p_vaddr
	le(base, 4)   // p_paddr
	le(size, 4)   // p_filesz
	le(size, 4)   // p_memsz
	le(5, 4)      // p_flags: r-x
	le(0x1000, 4) // p_align
	return append(b, code...)
}

// TestSeccompNativeABI runs a 32-bit program: the default profile refuses
// its system calls, and SeccompEngineDefault (the engine's own profile)
// lets it exit with its code.
func TestSeccompNativeABI(t *testing.T) {
	eng, image := engine(t)
	exit := func(settings dockersandbox.Settings) int {
		t.Helper()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "exit42"), i386Exit42(), 0o755); err != nil {
			t.Fatal(err)
		}
		drv, err := dockersandbox.New(bg, eng, image, dir, sandbox.Spec{}, &dockersandbox.Options{RemoveOnClose: true, Settings: settings})
		if err != nil {
			t.Fatal(err)
		}
		s := sandbox.New(drv, nil)
		defer s.Close(bg)
		res, err := s.Exec(bg, sandbox.ExecRequest{Argv: []string{"/workspace/exit42"}})
		if err != nil {
			t.Fatal(err)
		}
		return res.ExitCode
	}
	if code := exit(dockersandbox.Settings{SeccompProfile: dockersandbox.SeccompEngineDefault}); code != 42 {
		t.Skipf("under the engine's own profile the i386 program exits %d, not 42: this engine's kernel does not run i386 programs", code)
	}
	if code := exit(dockersandbox.Settings{}); code == 42 {
		t.Error("under the default profile an i386 system call went through")
	}
}
