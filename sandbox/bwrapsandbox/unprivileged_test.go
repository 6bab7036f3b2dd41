package bwrapsandbox

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/paddockdev/paddock/internal/testenv"
	"github.com/paddockdev/paddock/sandbox/driver"
)

// nobody is the unprivileged user TestUnprivileged runs as.
const nobody = 65534

// TestUnprivileged runs, as an unprivileged user, the tests that need the
// host not to be root: the exact PIDs limit and the conformance suite's
// fork bomb. As root it also checks that New refuses Spec.PIDs, which
// would not bind.
func TestUnprivileged(t *testing.T) {
	testenv.Need(t, "bwrap", Probe(bg, ""))
	if os.Geteuid() != 0 {
		t.Skip("not root: TestPIDsLimit and the conformance suite's ForkBomb run directly")
	}
	if _, err := New(bg, t.TempDir(), driver.Spec{PIDs: 10}, nil); !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "uid 0") {
		t.Errorf("New(PIDs) as root = %v, want ErrUnsupported naming uid 0", err)
	}

	// Copy the test binary where the unprivileged user can run it.
	dir, err := os.MkdirTemp("", "bwrap-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bwrapsandbox.test")
	if err := copyExecutable(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	// The child's own probe must pass as the unprivileged user too.
	probe := exec.Command("bwrap", append(systemArgs(), "--unshare-all", "--", "true")...)
	probe.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if out, err := probe.CombinedOutput(); err != nil {
		testenv.Need(t, "bwrap", errors.New("bubblewrap cannot run as an unprivileged user here: "+err.Error()+": "+string(out)))
	}

	cmd := exec.Command(bin, "-test.run", "^(TestPIDsLimit|TestConformance)$/^(ForkBomb)?$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + os.TempDir(), "HOME=/nonexistent", "PADDOCK_REQUIRE=" + os.Getenv("PADDOCK_REQUIRE")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	t.Logf("as uid %d:\n%s", nobody, out)
	if err != nil {
		t.Fatalf("the unprivileged run failed: %v", err)
	}
	for _, want := range []string{"--- PASS: TestPIDsLimit", "--- PASS: TestConformance/ForkBomb"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the unprivileged run did not report %q", want)
		}
	}
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
