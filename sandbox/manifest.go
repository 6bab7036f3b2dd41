package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ManifestSchema and ManifestVersion identify the manifest.json format.
const (
	ManifestSchema  = "paddock.sandbox.manifest"
	ManifestVersion = 1
)

// A Manifest describes a prepared sandbox: what was copied, from where, and
// the project's git commit at the time. It is stored as manifest.json in the
// sandbox directory; see the package documentation for the format.
type Manifest struct {
	Schema    string    `json:"schema"`
	Version   int       `json:"version"`
	RunID     string    `json:"runId"`
	AgentID   string    `json:"agentId"`
	CreatedAt time.Time `json:"createdAt"`
	Base      Base      `json:"base"`
	// Selection is the selection as the host passed it.
	Selection Selection `json:"selection"`
	// Files are the copied regular files, sorted by path.
	Files []FileEntry `json:"files"`
	// Symlinks are the copied symbolic links, sorted by path.
	Symlinks []SymlinkEntry `json:"symlinks,omitempty"`
	// TotalBytes is the sum of the files' sizes (one copy).
	TotalBytes int64 `json:"totalBytes"`
}

// Base describes the project the sandbox was prepared from.
type Base struct {
	// ProjectRoot is the project's absolute path.
	ProjectRoot string `json:"projectRoot"`
	// GitHead is the full hash of the commit HEAD pointed to, or empty when
	// the project is not in a git repository or HEAD has no commit yet.
	GitHead string `json:"gitHead,omitempty"`
}

// A FileEntry describes one copied regular file, as it was in the project
// and is in input/.
type FileEntry struct {
	// Path is relative to the project root (and to input/ and work/),
	// '/'-separated.
	Path string `json:"path"`
	Size int64  `json:"size"`
	// Mode is the file's permission bits (setuid, setgid and sticky are not
	// copied). input/ holds the file without its write bits.
	Mode    fs.FileMode `json:"mode"`
	ModTime time.Time   `json:"mtime"`
	// SHA256 is the hex SHA-256 of the contents.
	SHA256 string `json:"sha256"`
}

// A SymlinkEntry describes one copied symbolic link.
type SymlinkEntry struct {
	Path string `json:"path"`
	// Link is the link's target, as stored in the link.
	Link string `json:"link"`
}

// writeManifest writes m to name.
func writeManifest(name string, m *Manifest) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return err
	}
	return os.WriteFile(name, buf.Bytes(), 0o644)
}

// readManifest reads and checks the manifest at name.
func readManifest(name string) (*Manifest, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("sandbox: %s: %w", name, err)
	}
	if m.Schema != ManifestSchema || m.Version != ManifestVersion {
		return nil, fmt.Errorf("sandbox: %s: schema %q version %d, want %q version %d", name, m.Schema, m.Version, ManifestSchema, ManifestVersion)
	}
	return &m, nil
}

// GitHead returns the commit HEAD points to in the git repository holding
// dir, or "" when there is none (no repository, a HEAD that is not valid, or
// a branch without commits). It reads the repository's files (HEAD, loose
// refs, packed-refs, and .git files of worktrees and submodules), so git
// need not be installed; only for the reftable ref format, which cannot be
// read that simply, does it run "git rev-parse HEAD" when git is on PATH.
func GitHead(ctx context.Context, dir string) (string, error) {
	gitDir, err := findGitDir(dir)
	if err != nil || gitDir == "" {
		return "", err
	}
	common := gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = c
	}
	if _, err := os.Stat(filepath.Join(common, "reftable")); err == nil {
		return gitRevParse(ctx, dir)
	}
	ref := "HEAD"
	for range 10 { // symbolic refs may chain; git allows 5 levels
		b, err := readRef(gitDir, common, ref)
		if err != nil || b == "" {
			return "", err
		}
		target, ok := strings.CutPrefix(b, "ref:")
		if !ok {
			if !isHash(b) {
				// Like git, take a directory whose HEAD is not
				// valid for something that is not a repository.
				return "", nil
			}
			return b, nil
		}
		ref = strings.TrimSpace(target)
		if !validRefName(ref) {
			return "", nil
		}
	}
	return "", fmt.Errorf("sandbox: git symbolic refs nest too deeply")
}

// findGitDir finds the git directory of the repository holding dir: the
// first ".git" directory, or ".git" file ("gitdir: …") in dir or above.
func findGitDir(dir string) (string, error) {
	for {
		p := filepath.Join(dir, ".git")
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			return p, nil
		case err == nil && fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return "", err
			}
			g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
			if !ok {
				return "", fmt.Errorf("sandbox: %s is not a gitdir file", p)
			}
			g = strings.TrimSpace(g)
			if !filepath.IsAbs(g) {
				g = filepath.Join(dir, g)
			}
			return g, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// readRef returns the contents of ref: a hash, "ref: <name>", or "" when
// the ref does not exist (an unborn branch).
func readRef(gitDir, common, ref string) (string, error) {
	// HEAD and other pseudo-refs live in the worktree's git dir; refs/
	// in the common dir (except per-worktree refs, rare enough to skip).
	base := common
	if !strings.HasPrefix(ref, "refs/") {
		base = gitDir
	}
	b, err := os.ReadFile(filepath.Join(base, filepath.FromSlash(ref)))
	if err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	if !errors.Is(err, fs.ErrNotExist) && !isDirErr(err) {
		return "", err
	}
	f, err := os.Open(filepath.Join(common, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		hash, name, ok := strings.Cut(line, " ")
		if ok && name == ref {
			return hash, nil
		}
	}
	return "", sc.Err()
}

func isDirErr(err error) bool { return errors.Is(err, syscall.EISDIR) }

// validRefName accepts the ref names HEAD may point to without letting a
// hostile HEAD name a file outside the git directory.
func validRefName(ref string) bool {
	if !strings.HasPrefix(ref, "refs/") || strings.IndexByte(ref, 0) >= 0 || strings.IndexByte(ref, '\\') >= 0 {
		return false
	}
	return path.Clean(ref) == ref && !strings.Contains(ref, "..")
}

func isHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// gitRevParse asks git for HEAD, returning "" without git or without a
// commit.
func gitRevParse(ctx context.Context, dir string) (string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", nil
	}
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "--verify", "-q", "HEAD^{commit}")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", nil
	}
	return strings.TrimSpace(string(out)), nil
}
