package dockersandbox

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func baseConfig(t *testing.T) Config {
	t.Helper()
	return Config{Key: "k", Image: "img", WorkDir: t.TempDir()}
}

func TestNormalizeRefusesUnsafe(t *testing.T) {
	root := t.TempDir()
	inside := filepath.Join(root, "data")
	os.Mkdir(inside, 0o755)
	os.Symlink("/etc", filepath.Join(root, "etc-link"))
	outside := t.TempDir()
	tests := []struct {
		name string
		edit func(*Config)
		want string // a word the error must hold
	}{
		{"docker socket", func(c *Config) { c.Binds = []Bind{{Source: "/var/run/docker.sock", Target: "/s"}} }, "Docker socket"},
		{"dir holding the socket", func(c *Config) { c.Binds = []Bind{{Source: "/var/run", Target: "/s"}} }, "Docker socket"},
		{"/etc", func(c *Config) { c.Binds = []Bind{{Source: "/etc", Target: "/x"}} }, "/etc"},
		{"inside /etc", func(c *Config) { c.Binds = []Bind{{Source: "/etc/ssl", Target: "/x"}} }, "/etc"},
		{"symlink to /etc", func(c *Config) { c.Binds = []Bind{{Source: filepath.Join(root, "etc-link"), Target: "/x"}} }, "/etc"},
		{"/proc", func(c *Config) { c.Binds = []Bind{{Source: "/proc", Target: "/x"}} }, "/proc"},
		{"/sys", func(c *Config) { c.Binds = []Bind{{Source: "/sys", Target: "/x"}} }, "/sys"},
		{"/dev", func(c *Config) { c.Binds = []Bind{{Source: "/dev", Target: "/x"}} }, "/dev"},
		{"root", func(c *Config) { c.Binds = []Bind{{Source: "/", Target: "/x"}} }, "root"},
		{"outside allowed roots", func(c *Config) { c.Binds = []Bind{{Source: outside, Target: "/x"}} }, "allowed roots"},
		{"no allowed roots", func(c *Config) { c.AllowedRoots = nil; c.Binds = []Bind{{Source: inside, Target: "/x"}} }, "allowed roots"},
		{"relative source", func(c *Config) { c.Binds = []Bind{{Source: "data", Target: "/x"}} }, "absolute"},
		{"target /", func(c *Config) { c.Binds = []Bind{{Source: inside, Target: "/"}} }, "target"},
		{"target over workspace", func(c *Config) { c.Binds = []Bind{{Source: inside, Target: "/workspace/x"}} }, "target"},
		{"target /proc", func(c *Config) { c.Binds = []Bind{{Source: inside, Target: "/proc/x"}} }, "target"},
		{"work dir /", func(c *Config) { c.WorkDir = "/" }, "root"},
		{"work dir /etc", func(c *Config) { c.WorkDir = "/etc" }, "/etc"},
		{"network host", func(c *Config) { c.Network = "host" }, "host"},
		{"network container", func(c *Config) { c.Network = "container:abc" }, "container:abc"},
		{"seccomp unconfined", func(c *Config) { c.SeccompProfile = "unconfined" }, "unconfined"},
		{"apparmor unconfined", func(c *Config) { c.AppArmorProfile = "unconfined" }, "unconfined"},
		{"reserved label", func(c *Config) { c.Labels = map[string]string{LabelKey: "x"} }, "reserved"},
		{"negative memory", func(c *Config) { c.MemoryBytes = -1 }, "negative"},
		{"tiny memory", func(c *Config) { c.MemoryBytes = 1 << 20 }, "minimum"},
		{"bad user", func(c *Config) { c.User = "root" }, "numeric"},
		{"bad dns", func(c *Config) { c.DNS = []string{"dns.example"} }, "dns"},
		{"bad extra host", func(c *Config) { c.ExtraHosts = []string{"nohost"} }, "name:ip"},
		{"no image", func(c *Config) { c.Image = "" }, "image"},
		{"no key", func(c *Config) { c.Key = "" }, "key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := baseConfig(t)
			cfg.AllowedRoots = []string{root}
			tt.edit(&cfg)
			_, err := normalize(cfg, "sha256:x")
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("normalize = %v, want ErrInvalidConfig mentioning %q", err, tt.want)
			}
		})
	}
	// What is allowed.
	cfg := baseConfig(t)
	cfg.AllowedRoots = []string{root}
	cfg.Binds = []Bind{{Source: inside, Target: "/data", ReadOnly: true}}
	cfg.Network = "bridge"
	if _, err := normalize(cfg, "sha256:x"); err != nil {
		t.Errorf("a bind inside the allowed roots: %v", err)
	}
}

func TestConfigHash(t *testing.T) {
	dir := t.TempDir()
	a := Config{Key: "k", Image: "img", WorkDir: dir, Env: map[string]string{"A": "1", "B": "2"}, Settings: Settings{DNS: []string{"10.0.0.2", "10.0.0.1"}}}
	b := a
	b.Env = map[string]string{"B": "2", "A": "1"}
	b.DNS = []string{"10.0.0.1", "10.0.0.2"}
	b.Image = "other-tag-of-the-same-image"
	hash := func(c Config, id string) string {
		n, err := normalize(c, id)
		if err != nil {
			t.Fatal(err)
		}
		return n.hash()
	}
	if hash(a, "sha256:1") != hash(b, "sha256:1") {
		t.Error("the hash depends on order or on the image's tag")
	}
	if hash(a, "sha256:1") == hash(a, "sha256:2") {
		t.Error("the hash ignores the image digest")
	}
	c := a
	c.PIDs = 99
	if hash(a, "sha256:1") == hash(c, "sha256:1") {
		t.Error("the hash ignores the pids limit")
	}
	c = a
	c.MemoryBytes = DefaultMemoryBytes
	if hash(a, "sha256:1") != hash(c, "sha256:1") {
		t.Error("the default limit and zero hash differently")
	}
	c = a
	c.SeccompProfile = SeccompEngineDefault
	if hash(a, "sha256:1") == hash(c, "sha256:1") {
		t.Error("the hash ignores the seccomp profile")
	}
}

// TestNativeSeccomp checks the default profile: Docker's, with every
// architecture's native ABI and none of its compatibility ABIs.
func TestNativeSeccomp(t *testing.T) {
	n, err := normalize(baseConfig(t), "sha256:1")
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "linux" {
		if n.Seccomp != "" {
			t.Errorf("seccomp on %s: %.80q, want the engine's default", runtime.GOOS, n.Seccomp)
		}
		return
	}
	var p struct {
		DefaultAction string `json:"defaultAction"`
		ArchMap       []struct {
			Arch      string   `json:"architecture"`
			SubArches []string `json:"subArchitectures"`
		} `json:"archMap"`
		Syscalls []struct {
			Names []string `json:"names"`
		} `json:"syscalls"`
	}
	if err := json.Unmarshal([]byte(n.Seccomp), &p); err != nil {
		t.Fatal(err)
	}
	if p.DefaultAction != "SCMP_ACT_ERRNO" {
		t.Errorf("default action %q, want SCMP_ACT_ERRNO (an allow-list)", p.DefaultAction)
	}
	native := false
	for _, a := range p.ArchMap {
		native = native || a.Arch == "SCMP_ARCH_X86_64"
		if len(a.SubArches) > 0 {
			t.Errorf("%s keeps sub-architectures %v", a.Arch, a.SubArches)
		}
	}
	allowed := 0
	for _, r := range p.Syscalls {
		allowed += len(r.Names)
	}
	if !native || allowed < 250 {
		t.Errorf("x86-64 in the arch map: %v; %d syscall names: not Docker's default profile", native, allowed)
	}
	c := baseConfig(t)
	c.SeccompProfile = SeccompEngineDefault
	if n, err := normalize(c, "sha256:1"); err != nil || n.Seccomp != "" {
		t.Errorf("SeccompEngineDefault: %v, %.80q; want no profile sent", err, n.Seccomp)
	}
}

func TestContainerName(t *testing.T) {
	a, b := ContainerName("Agent/One"), ContainerName("agent-one")
	if !strings.HasPrefix(a, NamePrefix+"agent-one-") || a == b {
		t.Errorf("names %q %q: want the prefix, a slug, and distinct names for distinct keys", a, b)
	}
	if n := ContainerName("///"); !strings.HasPrefix(n, NamePrefix) || len(n) != len(NamePrefix)+12 {
		t.Errorf("name of an all-symbol key: %q", n)
	}
}

func TestContainerPath(t *testing.T) {
	s := &Sandbox{dir: "/host/work"}
	tests := []struct {
		in, want string
		err      bool
	}{
		{"/host/work", "/workspace", false},
		{"/host/work/a/b", "/workspace/a/b", false},
		{"/host/work/a/../b", "/workspace/b", false},
		{"/host/workx", "", true},
		{"/host", "", true},
		{"/host/work/../other", "", true},
		{"relative", "", true},
	}
	for _, tt := range tests {
		got, err := s.ContainerPath(tt.in)
		if got != tt.want || (err != nil) != tt.err || (err != nil && !errors.Is(err, ErrPathOutside)) {
			t.Errorf("ContainerPath(%q) = %q, %v", tt.in, got, err)
		}
	}
}
