package workspace

import (
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// StateRootEnv is the environment variable that sets the state root when
// [PathsOptions.StateRoot] is empty.
const StateRootEnv = "PADDOCK_STATE_ROOT"

// Paths locates the two roots of one workspace: the user's project, which
// the runtime never writes state into, and the state root, which holds
// everything the runtime writes. The zero value is not usable; build one with
// [NewPaths].
//
// Paths is a value; it is safe for concurrent use.
type Paths struct {
	// ProjectRoot is the absolute path of the user's project.
	ProjectRoot string
	// StateRoot is the absolute path of the state root.
	StateRoot string
	// WorkspaceID is the deterministic slug of the workspace name; see
	// [WorkspaceID].
	WorkspaceID string
}

// PathsOptions are the optional inputs of [NewPaths]. A nil *PathsOptions
// means all defaults.
type PathsOptions struct {
	// StateRoot, when set, is the state root. Otherwise the environment
	// variable PADDOCK_STATE_ROOT is used, and otherwise ~/.paddock.
	StateRoot string
	// WorkspaceName seeds the workspace id (see [WorkspaceID]); empty means
	// "default".
	WorkspaceName string
	// AllowStateInProject permits a state root inside the project root.
	// By default that is refused, because runtime state must never end up
	// in the user's repository.
	AllowStateInProject bool
	// Getenv replaces os.Getenv, for tests. Nil means os.Getenv.
	Getenv func(string) string
}

// NewPaths resolves the roots of a workspace. The state root is, in order,
// opts.StateRoot, $PADDOCK_STATE_ROOT, then ~/.paddock. Relative paths are
// made absolute against the current directory. A state root inside the
// project root is refused unless opts.AllowStateInProject; the check is
// lexical (symlinks are not resolved). NewPaths touches nothing on disk.
func NewPaths(projectRoot string, opts *PathsOptions) (Paths, error) {
	var o PathsOptions
	if opts != nil {
		o = *opts
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if projectRoot == "" {
		return Paths{}, errors.New("workspace: empty project root: pass the directory of the user's project")
	}
	project, err := filepath.Abs(projectRoot)
	if err != nil {
		return Paths{}, fmt.Errorf("workspace: project root: %w", err)
	}
	state := o.StateRoot
	if state == "" {
		state = getenv(StateRootEnv)
	}
	if state == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return Paths{}, fmt.Errorf("workspace: no home directory for the default state root ~/.paddock; set %s or PathsOptions.StateRoot", StateRootEnv)
		}
		state = filepath.Join(home, ".paddock")
	}
	if state, err = filepath.Abs(state); err != nil {
		return Paths{}, fmt.Errorf("workspace: state root: %w", err)
	}
	if state == project {
		return Paths{}, fmt.Errorf("workspace: state root %s is the project root; choose a directory outside the project", state)
	}
	if !o.AllowStateInProject && within(project, state) {
		return Paths{}, fmt.Errorf("workspace: state root %s is inside the project root %s, where runtime state would mix with the user's files; choose a directory outside the project or set PathsOptions.AllowStateInProject", state, project)
	}
	return Paths{ProjectRoot: project, StateRoot: state, WorkspaceID: WorkspaceID(o.WorkspaceName)}, nil
}

// within reports whether path is strictly inside dir (lexically).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// ConfigFile is the state root's config.json.
func (p Paths) ConfigFile() string { return filepath.Join(p.StateRoot, "config.json") }

// PackagesDir is the directory of installed packages.
func (p Paths) PackagesDir() string { return filepath.Join(p.StateRoot, "packages") }

// WorkspaceDir is the directory of this workspace's state.
func (p Paths) WorkspaceDir() string {
	return filepath.Join(p.StateRoot, "workspaces", p.WorkspaceID)
}

// InstancesDir is the directory that holds one directory per instance.
func (p Paths) InstancesDir() string { return filepath.Join(p.WorkspaceDir(), "instances") }

// InstanceDir is the directory of the instance with the given key; see
// [DirName] for how keys become names.
func (p Paths) InstanceDir(key string) (string, error) {
	name, err := DirName(key)
	if err != nil {
		return "", err
	}
	return filepath.Join(p.InstancesDir(), name), nil
}

// SandboxesDir is the directory of worker sandboxes.
func (p Paths) SandboxesDir() string { return filepath.Join(p.WorkspaceDir(), "sandboxes") }

// SandboxDir is the directory of one agent's sandbox in one run:
// sandboxes/<runId>/<agentId>, each mapped by [DirName].
func (p Paths) SandboxDir(runID, agentID string) (string, error) {
	run, err := DirName(runID)
	if err != nil {
		return "", fmt.Errorf("run id: %w", err)
	}
	agent, err := DirName(agentID)
	if err != nil {
		return "", fmt.Errorf("agent id: %w", err)
	}
	return filepath.Join(p.SandboxesDir(), run, agent), nil
}

// TrashDir holds instances being deleted.
func (p Paths) TrashDir() string { return filepath.Join(p.WorkspaceDir(), "trash") }

// AuditLog is the workspace's audit log of instance lifecycle events.
func (p Paths) AuditLog() string { return filepath.Join(p.WorkspaceDir(), "audit.jsonl") }

// SecretsFile is the encrypted secret store.
func (p Paths) SecretsFile() string { return filepath.Join(p.StateRoot, "secrets.json") }

// SecretKeyFile is the default key file of the secret store.
func (p Paths) SecretKeyFile() string { return filepath.Join(p.StateRoot, "secrets.key") }

// WorkspaceID returns the deterministic, file-system-safe slug of a
// workspace name: trimmed, lowercased, every character outside [a-z0-9._-]
// replaced by '-', runs of '-' collapsed, leading and trailing '-' and '.'
// removed, at most 128 characters, and "default" when nothing is left.
//
// Beyond the seed's recipe it also strips dots at the ends (so "." and ".."
// can never name a directory, and no id is hidden or ends in a dot, which
// Windows forbids) and appends '_' to Windows device names ("con" becomes "con_",
// "lpt1.txt" becomes "lpt1_.txt").
func WorkspaceID(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		if r < utf8.RuneSelf && safeByte(byte(r)) {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	id := trimEnds(b.String())
	if len(id) > 128 {
		id = trimEnds(id[:128])
	}
	if id == "" {
		return "default"
	}
	if reservedWindows(id) {
		base, ext, _ := strings.Cut(id, ".")
		id = base + "_"
		if ext != "" {
			id += "." + ext
		}
	}
	return id
}

func trimEnds(s string) string { return strings.Trim(s, "-.") }

func safeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// reservedWindows reports whether name (lowercase) is a Windows device name,
// which is reserved with any extension.
func reservedWindows(name string) bool {
	base, _, _ := strings.Cut(name, ".")
	switch base {
	case "con", "prn", "aux", "nul", "conin$", "conout$":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "com") || strings.HasPrefix(base, "lpt")) {
		c := base[3]
		return '0' <= c && c <= '9'
	}
	return false
}

// ErrInvalidKey is returned for an instance key (or other id) that cannot
// name anything: empty, not UTF-8, or longer than [MaxKeyLen] bytes.
var ErrInvalidKey = errors.New("workspace: invalid key")

// MaxKeyLen is the longest key, in bytes, that [DirName] accepts.
const MaxKeyLen = 1024

const maxPlainName = 64

var hashEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// DirName maps a key (an instance key, a run or agent id) to a directory
// name, injectively: two different keys never share a name, and every name
// is valid on Linux, macOS and Windows, including case-insensitive file
// systems.
//
// A key that is already a safe name (at most 64 characters of [a-z0-9._-],
// starting with a letter or digit, not ending in '.', not a Windows device
// name) is used as it is. Any other key becomes a readable slug of it plus
// "~" and 12 characters of its SHA-256, so "a/b" maps to "a-b~…" while "a-b"
// stays "a-b". Safe names never contain '~', so the two forms cannot meet.
func DirName(key string) (string, error) {
	if key == "" || len(key) > MaxKeyLen || !utf8.ValidString(key) {
		return "", fmt.Errorf("%w %.40q: keys must be 1 to %d bytes of UTF-8", ErrInvalidKey, key, MaxKeyLen)
	}
	if plainName(key) {
		return key, nil
	}
	slug := WorkspaceID(key)
	if len(slug) > 40 {
		slug = trimEnds(slug[:40])
	}
	sum := sha256.Sum256([]byte(key))
	return slug + "~" + hashEncoding.EncodeToString(sum[:])[:12], nil
}

func plainName(key string) bool {
	if len(key) > maxPlainName {
		return false
	}
	for i := 0; i < len(key); i++ {
		if !safeByte(key[i]) {
			return false
		}
	}
	first, last := key[0], key[len(key)-1]
	return first != '.' && first != '-' && first != '_' && last != '.' && !reservedWindows(key)
}
