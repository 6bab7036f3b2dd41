package dockersandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
)

// The seed's defaults.
const (
	// NamePrefix starts the name of every container this package makes.
	NamePrefix = "paddock-sbx-"
	// Workdir is where the sandbox's work directory is bound inside the
	// container.
	Workdir = "/workspace"
	// DefaultIdleHours is how long a container may stay unused before
	// [Engine.Prune] removes it.
	DefaultIdleHours = 24
	// DefaultMaxAgeDays is how old a container may grow before
	// [Engine.Prune] removes it, used or not.
	DefaultMaxAgeDays = 7
)

// Default limits, all on unless a Config says otherwise.
const (
	DefaultMemoryBytes = 1 << 30 // memory, and memory+swap (no swap)
	DefaultPIDs        = 256
	DefaultCPUs        = 1.0
	DefaultNoFile      = 1024
)

// SchemaEpoch is part of every config hash: raising it (when the meaning of
// the settings changes) makes every existing container be recreated.
//
// Epoch 2: an empty SeccompProfile means the native-ABI profile.
const SchemaEpoch = 2

// SeccompEngineDefault, as [Settings.SeccompProfile], keeps the engine's
// own default seccomp profile, compatibility ABIs included: for images
// that run 32-bit programs.
const SeccompEngineDefault = "engine-default"

// Labels put on every container.
const (
	LabelSandbox     = "dev.paddock.sandbox"      // "1"
	LabelKey         = "dev.paddock.key"          // the sandbox key
	LabelConfigHash  = "dev.paddock.config-hash"  // see [Config]
	LabelImageDigest = "dev.paddock.image-digest" // the image ID the container was made from
	LabelScope       = "dev.paddock.scope"        // a hash of the registry's state root
)

// Settings are the optional container settings shared by [Config] and
// [Options].
type Settings struct {
	// Network is the Docker network of a networked sandbox: "" or "none"
	// for none, "bridge" or the name of a user-defined network. "host" and
	// "container:…" are refused.
	Network string
	// User is "uid:gid" to run as; empty means the owner of the work
	// directory, so files written inside keep their ownership on the host.
	User string
	// Binds are extra bind mounts. Each source must lie inside one of
	// AllowedRoots, and may not be or hold the Docker socket, /etc, /proc,
	// /sys, /dev or /.
	Binds []Bind
	// AllowedRoots are the host directories extra binds (and
	// Spec.Writable) may come from; empty allows none.
	AllowedRoots []string
	// NoFile is the open-files ulimit; zero means DefaultNoFile.
	NoFile int64
	// SeccompProfile is the host path of a seccomp profile (JSON). Empty
	// means Docker's default profile limited to the native system-call ABI
	// (no i386 or x32 calls on x86-64, no 32-bit ARM calls on arm64), which
	// also makes every exec faster; a client built for a system other than
	// Linux sends no profile, so the engine's default applies.
	// [SeccompEngineDefault] means the engine's own default profile, which
	// allows them. "unconfined" is refused.
	SeccompProfile string
	// AppArmorProfile names an AppArmor profile; empty means the engine's
	// default. "unconfined" is refused.
	AppArmorProfile string
	// DNS servers and ExtraHosts ("name:ip") entries.
	DNS        []string
	ExtraHosts []string
	// Labels are added to the container's labels (the dev.paddock.
	// prefix is reserved).
	Labels map[string]string
}

// Bind is one extra bind mount.
type Bind struct {
	Source   string // absolute host path
	Target   string // absolute container path
	ReadOnly bool
}

// Config is what a container is made from. Its settings, normalized and
// sorted, with [SchemaEpoch] and the image's digest (its ID, not its tag),
// hash to the config hash stored in the container's labels:
// [Engine.EnsureContainer] reuses a container whose hash matches and
// recreates one whose hash does not.
type Config struct {
	// Key names the sandbox; the container is NamePrefix + a slug of it.
	Key string
	// Image is the image reference (tag or ID). It must be present in the
	// engine: nothing is pulled.
	Image string
	// WorkDir is the host directory bound at /workspace.
	WorkDir string
	// Env is the container's environment.
	Env map[string]string
	// MemoryBytes, PIDs and CPUs are the limits; zero means the default.
	MemoryBytes int64
	PIDs        int64
	CPUs        float64
	Settings
}

// ErrInvalidConfig is returned for a Config (or sandbox Spec and Options)
// that is refused; the error says which setting and why.
var ErrInvalidConfig = errors.New("dockersandbox: invalid config")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
}

// normalized is a validated Config in canonical form: what is hashed and
// what the container is created from.
type normalized struct {
	Epoch       int               `json:"epoch"`
	ImageID     string            `json:"imageId"`
	Key         string            `json:"key"`
	WorkDir     string            `json:"workDir"`
	User        string            `json:"user"`
	Network     string            `json:"network"`
	Env         []string          `json:"env"`
	MemoryBytes int64             `json:"memoryBytes"`
	PIDs        int64             `json:"pids"`
	NanoCPUs    int64             `json:"nanoCpus"`
	NoFile      int64             `json:"noFile"`
	Seccomp     string            `json:"seccomp"` // the profile's content
	AppArmor    string            `json:"apparmor"`
	DNS         []string          `json:"dns"`
	ExtraHosts  []string          `json:"extraHosts"`
	Labels      map[string]string `json:"labels"` // encoding/json sorts map keys
	Binds       []Bind            `json:"binds"`
}

func (n *normalized) hash() string {
	b, err := json.Marshal(n)
	if err != nil {
		panic(err) // only strings, ints and maps of strings
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

var keyRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// ContainerName returns the name of the container of the sandbox key: the
// prefix, the key made safe for Docker, and a short hash of the key itself
// so that distinct keys never share a container.
func ContainerName(key string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(key) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	slug := strings.Trim(b.String(), "-_.")
	if len(slug) > 40 {
		slug = slug[:40]
	}
	sum := sha256.Sum256([]byte(key))
	if slug == "" {
		return NamePrefix + hex.EncodeToString(sum[:6])
	}
	return NamePrefix + slug + "-" + hex.EncodeToString(sum[:4])
}

// forbidden are the host paths no bind may be, hold, or lie inside.
var forbidden = []string{"/etc", "/proc", "/sys", "/dev"}

// sockets are the Docker socket's usual homes; binding one (or a directory
// holding one) hands the sandbox the engine.
var sockets = []string{"/var/run/docker.sock", "/run/docker.sock"}

func within(p, root string) bool {
	if root == "/" {
		return true
	}
	return p == root || strings.HasPrefix(p, root+"/")
}

// checkHostPath refuses a host path that is or holds the Docker socket,
// /etc, /proc, /sys, /dev or /, or that lies inside one of them. what names
// the setting in the error.
func checkHostPath(what, p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", invalid("%s %q is not an absolute path", what, p)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(p))
	if err != nil {
		return "", invalid("%s %q: %v", what, p, err)
	}
	if real == "/" {
		return "", invalid("%s %q is the host's root directory: refusing to bind it", what, p)
	}
	socks := slices.Clone(sockets)
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
		socks = append(socks, strings.TrimPrefix(h, "unix://"))
	}
	for _, s := range socks {
		rs, err := filepath.EvalSymlinks(s)
		if err != nil {
			rs = s
		}
		if within(rs, real) || within(s, real) {
			return "", invalid("%s %q is or holds the Docker socket %s: binding it hands the sandbox the engine", what, p, s)
		}
	}
	if fi, err := os.Stat(real); err == nil && fi.Mode()&os.ModeSocket != 0 && strings.Contains(filepath.Base(real), "docker") {
		return "", invalid("%s %q is a Docker socket: binding it hands the sandbox the engine", what, p)
	}
	for _, f := range forbidden {
		if within(real, f) || within(f, real) {
			return "", invalid("%s %q is, holds or lies inside %s: refusing to bind it", what, p, f)
		}
	}
	return real, nil
}

// normalize validates cfg and puts it in canonical form. imageID is the
// image's digest.
func normalize(cfg Config, imageID string) (*normalized, error) {
	n := &normalized{Epoch: SchemaEpoch, ImageID: imageID, Key: cfg.Key}
	if cfg.Key == "" || len(cfg.Key) > 200 || strings.ContainsAny(cfg.Key, "\x00\n") {
		return nil, invalid("key %q: want 1 to 200 characters, no NUL or newline", cfg.Key)
	}
	if cfg.Image == "" {
		return nil, invalid("no image: set the image to run (it is never pulled: build or load it first)")
	}
	wd, err := checkHostPath("work directory", cfg.WorkDir)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(wd)
	if err != nil || !fi.IsDir() {
		return nil, invalid("work directory %s is not a directory", cfg.WorkDir)
	}
	n.WorkDir = wd
	n.User = cfg.User
	if n.User == "" {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil, invalid("cannot read the owner of %s: set User", wd)
		}
		n.User = fmt.Sprintf("%d:%d", st.Uid, st.Gid)
	} else if !regexp.MustCompile(`^[0-9]+(:[0-9]+)?$`).MatchString(n.User) {
		return nil, invalid("user %q: want uid or uid:gid, numeric", n.User)
	}
	switch nw := cfg.Network; {
	case nw == "" || nw == "none":
		n.Network = "none"
	case nw == "host":
		return nil, invalid(`network "host" shares the host's network stack: refused`)
	case strings.HasPrefix(nw, "container:"):
		return nil, invalid("network %q joins another container's network stack: refused", nw)
	case nw == "default":
		n.Network = "bridge"
	default:
		n.Network = nw
	}
	for k, v := range cfg.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.IndexByte(v, 0) >= 0 {
			return nil, invalid("environment variable %q: bad name or value", k)
		}
		n.Env = append(n.Env, k+"="+v)
	}
	sort.Strings(n.Env)
	if cfg.MemoryBytes < 0 || cfg.PIDs < 0 || cfg.CPUs < 0 || cfg.NoFile < 0 {
		return nil, invalid("limits may not be negative (zero means the default; there is no unlimited)")
	}
	n.MemoryBytes = cmpOr(cfg.MemoryBytes, DefaultMemoryBytes)
	if n.MemoryBytes < 6<<20 {
		return nil, invalid("memory limit %d bytes is below Docker's minimum of 6 MiB", n.MemoryBytes)
	}
	n.PIDs = cmpOr(cfg.PIDs, DefaultPIDs)
	n.NanoCPUs = int64(cmpOr(cfg.CPUs, DefaultCPUs) * 1e9)
	if n.NanoCPUs < 1e7 {
		return nil, invalid("CPUs %v is below 0.01", cfg.CPUs)
	}
	n.NoFile = cmpOr(cfg.NoFile, DefaultNoFile)
	switch p := cfg.SeccompProfile; p {
	case "":
		n.Seccomp = nativeSeccomp()
	case SeccompEngineDefault:
	case "unconfined":
		return nil, invalid("seccomp profile \"unconfined\" turns the syscall filter off: refused")
	default:
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, invalid("seccomp profile: %v", err)
		}
		if !json.Valid(b) {
			return nil, invalid("seccomp profile %s is not JSON", p)
		}
		n.Seccomp = string(b)
	}
	if p := cfg.AppArmorProfile; p != "" {
		if p == "unconfined" {
			return nil, invalid("AppArmor profile \"unconfined\" turns AppArmor off: refused")
		}
		n.AppArmor = p
	}
	for _, d := range cfg.DNS {
		a, err := netip.ParseAddr(d)
		if err != nil {
			return nil, invalid("dns %q: %v", d, err)
		}
		n.DNS = append(n.DNS, a.String())
	}
	sort.Strings(n.DNS)
	for _, h := range cfg.ExtraHosts {
		name, ip, ok := strings.Cut(h, ":")
		if _, err := netip.ParseAddr(ip); !ok || name == "" || err != nil {
			return nil, invalid("extra host %q: want name:ip", h)
		}
		n.ExtraHosts = append(n.ExtraHosts, h)
	}
	sort.Strings(n.ExtraHosts)
	n.Labels = map[string]string{}
	for k, v := range cfg.Labels {
		if strings.HasPrefix(k, "dev.paddock.") {
			return nil, invalid("label %q: the dev.paddock. prefix is reserved", k)
		}
		n.Labels[k] = v
	}
	var roots []string
	for _, r := range cfg.AllowedRoots {
		if !filepath.IsAbs(r) {
			return nil, invalid("allowed root %q is not absolute", r)
		}
		rr, err := filepath.EvalSymlinks(filepath.Clean(r))
		if err != nil {
			return nil, invalid("allowed root %q: %v", r, err)
		}
		roots = append(roots, rr)
	}
	for _, b := range cfg.Binds {
		src, err := checkHostPath("bind source", b.Source)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(roots, func(r string) bool { return within(src, r) }) {
			return nil, invalid("bind source %s is outside the allowed roots %v: add its root to AllowedRoots", b.Source, cfg.AllowedRoots)
		}
		t := b.Target
		if !filepath.IsAbs(t) || filepath.Clean(t) != t || t == "/" || within(t, Workdir) || within(Workdir, t) || slices.ContainsFunc([]string{"/proc", "/sys", "/dev"}, func(f string) bool { return within(t, f) }) {
			return nil, invalid("bind target %q: want a clean absolute path that is not /, /proc, /sys, /dev or %s", t, Workdir)
		}
		n.Binds = append(n.Binds, Bind{Source: src, Target: t, ReadOnly: b.ReadOnly})
	}
	sort.Slice(n.Binds, func(i, j int) bool { return n.Binds[i].Target < n.Binds[j].Target })
	for i := 1; i < len(n.Binds); i++ {
		if n.Binds[i].Target == n.Binds[i-1].Target {
			return nil, invalid("two binds target %s", n.Binds[i].Target)
		}
	}
	return n, nil
}

func cmpOr[T int64 | float64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}
