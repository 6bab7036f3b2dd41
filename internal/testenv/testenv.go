// Package testenv gates tests on external engines (bubblewrap, Docker): a
// test whose engine is missing skips with the reason, unless the
// PADDOCK_REQUIRE environment variable names the engine (as CI does), and
// then it fails.
package testenv

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// RequireEnv is the environment variable listing, comma-separated, the
// engines that must be present ("bwrap", "docker").
const RequireEnv = "PADDOCK_REQUIRE"

// Required reports whether PADDOCK_REQUIRE names engine.
func Required(engine string) bool {
	return slices.Contains(strings.Split(os.Getenv(RequireEnv), ","), engine)
}

// Need skips t when err (the engine's probe result) is not nil, or fails it
// when PADDOCK_REQUIRE names engine.
func Need(t testing.TB, engine string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if Required(engine) {
		t.Fatalf("%s is required (%s=%s) but unavailable: %v", engine, RequireEnv, os.Getenv(RequireEnv), err)
	}
	t.Skipf("skipping: %s unavailable (set %s=%s to make this a failure): %v", engine, RequireEnv, engine, err)
}

// ProcessesWith returns the pids of the live (not zombie) processes whose
// command line contains marker, for tests that check no process of a tree
// survived.
func ProcessesWith(marker string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(marker)) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && f[0] != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}
