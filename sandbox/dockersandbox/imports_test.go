package dockersandbox_test

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOnlyDockerSandboxImportsTheClient asserts that no package of the
// module, except dockersandbox, its subpackages and examples/docker,
// depends on the Docker Engine API client, directly or not. It lists every
// package of the module with go list, so packages added later are checked
// too.
func TestOnlyDockerSandboxImportsTheClient(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	cmd := exec.Command(gobin, "list", "-e", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/paddockdev/paddock"
	allowed := []string{module + "/sandbox/dockersandbox", module + "/examples/docker"}
	var checked []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		if slices.ContainsFunc(allowed, func(a string) bool { return pkg == a || strings.HasPrefix(pkg, a+"/") }) {
			continue
		}
		checked = append(checked, pkg)
		for _, dep := range fields[1:] {
			if strings.HasPrefix(dep, "github.com/moby/moby/") || strings.HasPrefix(dep, "github.com/docker/") {
				t.Errorf("%s depends on %s: only dockersandbox may use the Docker client", pkg, dep)
			}
		}
	}
	for _, core := range []string{"sandbox", "workspace", "sandbox/driver", "proposal", "approval", "safety", "agent"} {
		if files, _ := filepath.Glob(filepath.Join("../..", core, "*.go")); len(files) == 0 {
			continue // not written yet
		}
		if !slices.Contains(checked, module+"/"+core) {
			t.Errorf("go list did not list %s: the check proves nothing", core)
		}
	}
}
