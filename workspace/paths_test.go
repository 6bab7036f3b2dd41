package workspace

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestWorkspaceID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "default"},
		{"   ", "default"},
		{"main:prod", "main-prod"},
		{"  My Project  ", "my-project"},
		{"a//b", "a-b"},
		{"--x--", "x"},
		{"..", "default"},
		{".", "default"},
		{"../../etc", "etc"},
		{".hidden", "hidden"},
		{"trailing.", "trailing"},
		{"CON", "con_"},
		{"lpt1.txt", "lpt1_.txt"},
		{"com10", "com10"},
		{"日本語", "default"},
		{"x\x00y", "x-y"},
		{"a_b.c-d", "a_b.c-d"},
		{"\u212a", "k"}, // Kelvin sign lowercases to ASCII k
		{strings.Repeat("a", 200), strings.Repeat("a", 128)},
		{strings.Repeat("a", 127) + "-b", strings.Repeat("a", 127)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := WorkspaceID(tt.in)
			if got != tt.want {
				t.Errorf("WorkspaceID(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := WorkspaceID(tt.in); again != got {
				t.Errorf("not deterministic: %q then %q", got, again)
			}
			checkPortableName(t, got)
		})
	}
}

// checkPortableName fails unless name is a valid, non-special directory name
// on Linux, macOS and Windows.
func checkPortableName(t *testing.T, name string) {
	t.Helper()
	if name == "" || name == "." || name == ".." || len(name) > 200 {
		t.Fatalf("name %q is not usable", name)
	}
	if strings.ContainsAny(name, "/\\:*?\"<>|\x00") {
		t.Errorf("name %q has a character Windows forbids", name)
	}
	if strings.HasSuffix(name, ".") || strings.HasSuffix(name, " ") {
		t.Errorf("name %q ends in a dot or space", name)
	}
	if strings.HasPrefix(name, ".") {
		t.Errorf("name %q is hidden", name)
	}
	if reservedWindows(strings.ToLower(name)) {
		t.Errorf("name %q is a Windows device name", name)
	}
	if name != strings.ToLower(name) {
		t.Errorf("name %q has upper case, which collides on case-insensitive file systems", name)
	}
}

func TestDirName(t *testing.T) {
	tests := []struct {
		key   string
		plain bool // used as it is
	}{
		{"user-123", true},
		{"a-b", true},
		{"a/b", false},
		{"a\\b", false},
		{"..", false},
		{".", false},
		{"../../etc/passwd", false},
		{"/abs", false},
		{"User-123", false},
		{"user:123", false},
		{"nul", false},
		{"aux.json", false},
		{"x\x00y", false},
		{"日本", false},
		{"emoji-🙂", false},
		{"trailing.", false},
		{"-leading", false},
		{strings.Repeat("k", 64), true},
		{strings.Repeat("k", 65), false},
		{strings.Repeat("ü", 500), false},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, err := DirName(tt.key)
			if err != nil {
				t.Fatal(err)
			}
			if (got == tt.key) != tt.plain {
				t.Errorf("DirName(%q) = %q; want plain=%v", tt.key, got, tt.plain)
			}
			if !tt.plain && !strings.Contains(got, "~") {
				t.Errorf("DirName(%q) = %q: a changed key must carry its hash", tt.key, got)
			}
			checkPortableName(t, got)
			if other, dup := seen[strings.ToLower(got)]; dup {
				t.Errorf("DirName(%q) = DirName(%q) = %q (ignoring case)", tt.key, other, got)
			}
			seen[strings.ToLower(got)] = tt.key
		})
	}
}

func TestDirNameInjective(t *testing.T) {
	// Keys that a naive slug maps to the same name.
	groups := [][]string{
		{"a/b", "a-b", "a:b", "a b", "A-B", "a--b", "a\\b"},
		{"user", "User", "USER", "user.", ".user"},
		{"x", "x~"},
	}
	for _, g := range groups {
		names := map[string]string{}
		for _, k := range g {
			n, err := DirName(k)
			if err != nil {
				t.Fatal(err)
			}
			if prev, dup := names[strings.ToLower(n)]; dup {
				t.Errorf("keys %q and %q share directory %q", prev, k, n)
			}
			names[strings.ToLower(n)] = k
		}
	}
}

func TestDirNameRejects(t *testing.T) {
	for _, key := range []string{"", "\xff\xfe", strings.Repeat("a", MaxKeyLen+1)} {
		if _, err := DirName(key); err == nil {
			t.Errorf("DirName(%.20q) succeeded, want ErrInvalidKey", key)
		}
	}
}

func TestNewPaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	project := t.TempDir()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == StateRootEnv {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		name      string
		opts      PathsOptions
		wantState string
		wantErr   string
	}{
		{"option wins", PathsOptions{StateRoot: "/opt/state", Getenv: env("/env/state")}, "/opt/state", ""},
		{"env next", PathsOptions{Getenv: env("/env/state")}, "/env/state", ""},
		{"home last", PathsOptions{Getenv: env("")}, filepath.Join(home, ".paddock"), ""},
		{"inside project refused", PathsOptions{StateRoot: filepath.Join(project, ".paddock")}, "", "inside the project root"},
		{"inside project allowed", PathsOptions{StateRoot: filepath.Join(project, ".paddock"), AllowStateInProject: true}, filepath.Join(project, ".paddock"), ""},
		{"equal to project refused", PathsOptions{StateRoot: project, AllowStateInProject: true}, "", "is the project root"},
		{"sibling with common prefix is fine", PathsOptions{StateRoot: project + "-state"}, project + "-state", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPaths(project, &tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.StateRoot != tt.wantState {
				t.Errorf("StateRoot = %q, want %q", p.StateRoot, tt.wantState)
			}
			if p.ProjectRoot != project || p.WorkspaceID != "default" {
				t.Errorf("got %+v", p)
			}
		})
	}
	if _, err := NewPaths("", nil); err == nil {
		t.Error("empty project root accepted")
	}
}

func TestPathsLayout(t *testing.T) {
	p := Paths{ProjectRoot: "/p", StateRoot: "/s", WorkspaceID: "main-prod"}
	inst, err := p.InstanceDir("user:123")
	if err != nil {
		t.Fatal(err)
	}
	sbx, err := p.SandboxDir("run-1", "Worker/A")
	if err != nil {
		t.Fatal(err)
	}
	got := []string{p.ConfigFile(), p.PackagesDir(), p.InstancesDir(), filepath.Dir(inst), filepath.Dir(sbx), p.AuditLog()}
	want := []string{"/s/config.json", "/s/packages", "/s/workspaces/main-prod/instances", "/s/workspaces/main-prod/instances", "/s/workspaces/main-prod/sandboxes/run-1", "/s/workspaces/main-prod/audit.jsonl"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("path %d = %q, want %q", i, got[i], want[i])
		}
	}
	if !strings.HasPrefix(filepath.Base(inst), "user-123~") {
		t.Errorf("instance dir %q", inst)
	}
	for _, bad := range []string{"", "\xff"} {
		if _, err := p.SandboxDir(bad, "a"); err == nil {
			t.Errorf("SandboxDir(%q) accepted", bad)
		}
	}
}
