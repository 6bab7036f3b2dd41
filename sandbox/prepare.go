package sandbox

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/paddockdev/paddock/workspace"
)

// Defaults of [PrepareOptions].
const (
	DefaultMaxFiles = 100_000
	DefaultMaxBytes = 1 << 30
	// MaxWorkers bounds PrepareOptions.Workers.
	MaxWorkers = 64
)

// PrepareOptions are the optional inputs of [Prepare]. A nil
// *PrepareOptions means all defaults.
type PrepareOptions struct {
	// Allow lists blocked directory names the host allows in the
	// selection: any of ".git", "node_modules" and "dist". Other names are
	// an error. The state directory cannot be allowed: the sandbox being
	// prepared lives there.
	Allow []string
	// Symlinks says what to do with selected symbolic links; the zero value
	// refuses them.
	Symlinks SymlinkPolicy
	// MaxFiles caps the number of selected files and links; 0 means
	// DefaultMaxFiles (100,000), negative means no cap.
	MaxFiles int
	// MaxBytes caps the selected files' total size (one copy; the sandbox
	// holds two); 0 means DefaultMaxBytes (1 GiB), negative means no cap.
	MaxBytes int64
	// Workers is the number of files copied at once; 0 means twice
	// GOMAXPROCS, at least 8 (file creation waits on the file system more
	// than on the CPU). It is capped at MaxWorkers.
	Workers int
}

func (o *PrepareOptions) withDefaults() PrepareOptions {
	var r PrepareOptions
	if o != nil {
		r = *o
	}
	switch {
	case r.MaxFiles == 0:
		r.MaxFiles = DefaultMaxFiles
	case r.MaxFiles < 0:
		r.MaxFiles = int(^uint(0) >> 1)
	}
	switch {
	case r.MaxBytes == 0:
		r.MaxBytes = DefaultMaxBytes
	case r.MaxBytes < 0:
		r.MaxBytes = 1<<63 - 1
	}
	if r.Workers <= 0 {
		r.Workers = max(8, 2*runtime.GOMAXPROCS(0))
	}
	r.Workers = min(r.Workers, MaxWorkers)
	return r
}

// Dirs are the directories of one sandbox.
type Dirs struct {
	// Root is the sandbox directory,
	// <stateRoot>/workspaces/<wsId>/sandboxes/<runId>/<agentId>.
	Root string
	// Input is the read-only baseline copy of the selection.
	Input string
	// Work is the worker's copy of the selection, and its working
	// directory.
	Work string
	// Proposal is where the worker's proposal is written; Prepare creates
	// it empty.
	Proposal string
	// Manifest is the manifest.json file.
	Manifest string
}

// Paths returns the directories of the sandbox of agentID in runID. It
// touches nothing on disk. The ids are mapped to directory names by
// [workspace.DirName].
func Paths(ws workspace.Paths, runID, agentID string) (Dirs, error) {
	root, err := ws.SandboxDir(runID, agentID)
	if err != nil {
		return Dirs{}, fmt.Errorf("sandbox: %w", err)
	}
	return dirsAt(root), nil
}

func dirsAt(root string) Dirs {
	return Dirs{
		Root:     root,
		Input:    filepath.Join(root, "input"),
		Work:     filepath.Join(root, "work"),
		Proposal: filepath.Join(root, "proposal"),
		Manifest: filepath.Join(root, "manifest.json"),
	}
}

// Prepared is a prepared sandbox: its directories and its manifest. It is
// not the portable Sandbox type that runs processes; it is the snapshot of
// files such a sandbox runs in.
//
// A Prepared is safe for concurrent use; the Manifest it returns must not
// be modified.
type Prepared struct {
	dirs     Dirs
	manifest *Manifest
}

// Dirs returns the sandbox's directories.
func (p *Prepared) Dirs() Dirs { return p.dirs }

// Manifest returns the sandbox's manifest. The caller must not modify it.
func (p *Prepared) Manifest() *Manifest { return p.manifest }

// Env returns the environment variables, as "key=value", that processes run
// in the work directory need on top of their environment:
// GIT_CEILING_DIRECTORIES set to the sandbox directory, so that git started
// in work/ or below looks for a repository no higher than work/ and cannot
// find the project's (even when the state root is inside the project). A
// worker may still "git init" in work/.
//
// The host must also not pass GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE,
// GIT_OBJECT_DIRECTORY or GIT_COMMON_DIR through from its own environment:
// they name a repository directly and bypass discovery.
func (p *Prepared) Env() []string {
	return []string{"GIT_CEILING_DIRECTORIES=" + p.dirs.Root}
}

// Prepare copies the selection of the project ws.ProjectRoot into a new
// sandbox for agentID in runID, at the directory [Paths] reports:
//
//	manifest.json   what was copied (see [Manifest])
//	input/          the baseline, read-only (files and directories lose
//	                their write bits)
//	work/           the worker's copy, identical to input/ but writable
//	proposal/       empty
//
// Prepare first expands the selection, applying the policy described on
// [Selection] and [PrepareOptions] and the caps, and only then copies, in
// parallel, into a temporary directory beside the sandbox that it renames
// into place when everything is done. On any error, including a refused
// path, a cap, or ctx being done (which stops the copy and returns an error
// wrapping ctx.Err()), nothing is left behind.
//
// Preparing a sandbox that already exists is an error wrapping
// fs.ErrExist: destroy it first. Files are copied with their permission
// bits (without setuid, setgid and sticky) and modification times;
// directories get their permission bits plus owner rwx in work/, and r-x
// without w in input/. Owners and extended attributes are not copied.
// Prepare does not sync: after a power loss, destroy and prepare again.
func Prepare(ctx context.Context, ws workspace.Paths, runID, agentID string, sel Selection, opts *PrepareOptions) (_ *Prepared, err error) {
	o := opts.withDefaults()
	dirs, err := Paths(ws, runID, agentID)
	if err != nil {
		return nil, err
	}
	if ws.ProjectRoot == "" || ws.StateRoot == "" || !filepath.IsAbs(ws.ProjectRoot) {
		return nil, errors.New("sandbox: workspace paths without an absolute project root or a state root; build them with workspace.NewPaths")
	}
	if _, err := os.Lstat(dirs.Root); err == nil {
		return nil, fmt.Errorf("sandbox: %s already exists; destroy it before preparing it again: %w", dirs.Root, fs.ErrExist)
	}
	pats := make([]pattern, 0, len(sel))
	for _, s := range sel {
		p, err := parsePattern(s)
		if err != nil {
			return nil, err
		}
		pats = append(pats, p)
	}
	stateRel := ""
	if rel, err := filepath.Rel(ws.ProjectRoot, ws.StateRoot); err == nil && filepath.IsLocal(rel) {
		stateRel = filepath.ToSlash(rel)
	}
	block, err := newBlocker(o.Allow, stateRel)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(ws.ProjectRoot)
	if err != nil {
		return nil, fmt.Errorf("sandbox: project root: %w", err)
	}
	defer root.Close()

	// Walk first: nothing is written before the whole selection passed
	// the policy and the caps.
	s := newSelector(root, block, &o)
	for _, p := range pats {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := s.add(p); err != nil {
			return nil, err
		}
	}
	if err := s.checkLinks(); err != nil {
		return nil, err
	}
	head, err := GitHead(ctx, ws.ProjectRoot)
	if err != nil {
		return nil, err
	}

	parent := filepath.Dir(dirs.Root)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, filepath.Base(dirs.Root)+tmpInfix)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, removeTree(tmp))
		}
	}()
	td := dirsAt(tmp)
	c := &copier{root: root, work: td.Work, input: td.Input}
	if c.umask, err = probeUmask(tmp); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	es := s.sorted()
	dl := s.dirs()
	for _, d := range []string{td.Work, td.Input} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	if err := os.Mkdir(td.Proposal, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	c.made = make(map[string]*madeDir, len(dl))
	for _, rel := range dl {
		c.made[rel] = new(madeDir)
	}
	res, err := c.copyAll(ctx, es, o.Workers)
	if err != nil {
		return nil, err
	}
	// The directories no copied file is in (empty, or holding only
	// links).
	for _, rel := range dl {
		if err := c.mkdir(rel); err != nil {
			return nil, err
		}
	}

	m := &Manifest{
		Schema: ManifestSchema, Version: ManifestVersion,
		RunID: runID, AgentID: agentID, CreatedAt: time.Now().UTC(),
		Base:      Base{ProjectRoot: ws.ProjectRoot, GitHead: head},
		Selection: slices.Clone(sel),
		Files:     make([]FileEntry, 0, len(es)),
	}
	for i, e := range es {
		if e.isLink {
			for _, d := range []string{td.Work, td.Input} {
				if err := os.Symlink(e.target, filepath.Join(d, filepath.FromSlash(e.rel))); err != nil {
					return nil, fmt.Errorf("sandbox: %w", err)
				}
			}
			m.Symlinks = append(m.Symlinks, SymlinkEntry{Path: e.rel, Link: e.target})
			continue
		}
		m.TotalBytes += e.size
		m.Files = append(m.Files, FileEntry{Path: e.rel, Size: e.size, Mode: e.perm, ModTime: e.mtime.UTC(), SHA256: hex.EncodeToString(res[i].sum[:])})
	}
	if err := writeManifest(td.Manifest, m); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	// Directory modes last, children first, so that making input/ read-only
	// never gets in the way.
	for _, rel := range slices.Backward(dl) {
		mode := s.dirModes[rel]
		if err := os.Chmod(filepath.Join(td.Work, filepath.FromSlash(rel)), mode|0o700); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		if err := os.Chmod(filepath.Join(td.Input, filepath.FromSlash(rel)), (mode|0o500)&^0o222); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	for d, mode := range map[string]fs.FileMode{td.Work: 0o755, td.Input: 0o555, tmp: 0o755} {
		if err := os.Chmod(d, mode); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	if err := os.Rename(tmp, dirs.Root); err != nil {
		if _, serr := os.Lstat(dirs.Root); serr == nil {
			return nil, fmt.Errorf("sandbox: %s was created by someone else meanwhile; destroy it before preparing it again: %w", dirs.Root, fs.ErrExist)
		}
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return &Prepared{dirs: dirs, manifest: m}, nil
}

// tmpInfix separates a sandbox's name from the random suffix of the
// temporary directory it is built in.
const tmpInfix = ".tmp-"

// probeUmask returns the permission bits the process umask removes, by
// creating a file in dir.
func probeUmask(dir string) (fs.FileMode, error) {
	name := filepath.Join(dir, ".umask")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o777)
	if err != nil {
		return 0, err
	}
	fi, err := f.Stat()
	f.Close()
	os.Remove(name)
	if err != nil {
		return 0, err
	}
	return 0o777 &^ fi.Mode().Perm(), nil
}

// Load returns the sandbox of agentID in runID as [Prepare] left it, reading
// its manifest. It returns an error wrapping fs.ErrNotExist when there is
// no such sandbox.
func Load(ws workspace.Paths, runID, agentID string) (*Prepared, error) {
	dirs, err := Paths(ws, runID, agentID)
	if err != nil {
		return nil, err
	}
	m, err := readManifest(dirs.Manifest)
	if err != nil {
		return nil, err
	}
	return &Prepared{dirs: dirs, manifest: m}, nil
}

// Destroy removes the sandbox of agentID in runID, read-only input/
// included, and any temporary directory an interrupted [Prepare] of it left.
// It then removes the run's directory if that is empty. Destroying a
// sandbox that does not exist is not an error. Destroy checks ctx before it
// starts; the removal itself is not interrupted.
//
// Destroy does not stop processes still running in the sandbox; stop them
// first.
func Destroy(ctx context.Context, ws workspace.Paths, runID, agentID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dirs, err := Paths(ws, runID, agentID)
	if err != nil {
		return err
	}
	var errs []error
	errs = append(errs, removeTree(dirs.Root))
	parent := filepath.Dir(dirs.Root)
	if des, err := os.ReadDir(parent); err == nil {
		prefix := filepath.Base(dirs.Root) + tmpInfix
		for _, de := range des {
			if strings.HasPrefix(de.Name(), prefix) {
				errs = append(errs, removeTree(filepath.Join(parent, de.Name())))
			}
		}
	}
	os.Remove(parent) // only when empty
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sandbox: destroy: %w", err)
	}
	return nil
}

// removeTree removes dir and everything below it, first making directories
// writable where that is what stops the removal.
func removeTree(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			if fi, err := d.Info(); err == nil && fi.Mode().Perm()&0o700 != 0o700 {
				os.Chmod(p, fi.Mode().Perm()|0o700)
			}
		}
		return nil
	})
	return os.RemoveAll(dir)
}
