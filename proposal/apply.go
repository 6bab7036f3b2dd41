package proposal

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"golang.org/x/sync/errgroup"

	"github.com/paddockdev/paddock/internal/diff"
	"github.com/paddockdev/paddock/internal/linkres"
	"github.com/paddockdev/paddock/internal/vfs"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/workspace"
)

// ErrDrift is wrapped by Apply's error when the project changed since the
// proposal's base in a way Apply may not or cannot merge: a file whose
// before-image does not match and that cannot be merged (binary, symbolic
// link, deleted, or ApplyOptions.NoMerge), or a moved HEAD when
// ApplyOptions.RequireBaseHead is set. A *ConflictError is drift too:
// errors.Is(conflictErr, ErrDrift) holds.
var ErrDrift = errors.New("proposal: the project drifted from the proposal's base")

// A ConflictError is returned by Apply when a drifted file could not be
// merged. Nothing was written to the project: conflicts are returned,
// never written as markers.
type ConflictError struct {
	ProposalID string
	Files      []FileConflict
}

// A FileConflict is one file that could not be merged.
type FileConflict struct {
	Path string
	// Reason says why, in words fit for a user or a model.
	Reason string
	// Regions are the conflicting regions of a three-way merge, empty
	// when no merge was possible.
	Regions []Conflict
}

// A Conflict is one region where the project (Ours) and the proposal
// (Theirs) changed the base differently. BaseStart and BaseEnd are 0-based
// line numbers in the base, end exclusive.
type Conflict struct {
	BaseStart, BaseEnd int
	Base, Ours, Theirs []byte
}

// Error lists the conflicting files and says what to do.
func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "proposal: %d file(s) conflict with changes made in the project:", len(e.Files))
	for _, f := range e.Files {
		fmt.Fprintf(&b, " %s (%s", f.Path, f.Reason)
		if len(f.Regions) > 0 {
			fmt.Fprintf(&b, ", %d region(s)", len(f.Regions))
		}
		b.WriteString(");")
	}
	s := strings.TrimSuffix(b.String(), ";")
	return s + "; resolve them in the project or ask the worker to rebase, then apply again"
}

// Is reports whether target is ErrDrift.
func (e *ConflictError) Is(target error) bool { return target == ErrDrift }

// A Verdict is what Apply found for one file when it compared the project
// with the proposal's before-image.
type Verdict string

// The verdicts.
const (
	// Clean: the project's file is the before-image; the patch applies.
	Clean Verdict = "clean"
	// AlreadyApplied: the project's file is already the after-image.
	AlreadyApplied Verdict = "already-applied"
	// Merged: the file drifted, and a three-way merge of input/, work/
	// and the project's file succeeded.
	Merged Verdict = "merged"
	// Conflicted: the file drifted and could not be merged.
	Conflicted Verdict = "conflict"
)

// FileResult is what Apply did to one file.
type FileResult struct {
	Path    string  `json:"path"`
	OldPath string  `json:"oldPath,omitempty"`
	Verdict Verdict `json:"verdict"`
}

// ApplyResult is what Apply did.
type ApplyResult struct {
	// ProposalID is the proposal's id, empty for ApplyPatch.
	ProposalID string
	Files      []FileResult
	// Head is the project's current git HEAD ("" outside git), and
	// HeadMoved reports that it differs from the proposal's base.
	Head      string
	HeadMoved bool
	// Reverse, when ApplyOptions.Reverse is set, is a git patch that
	// undoes what Apply wrote: ApplyPatch of it (or git apply) restores
	// the project.
	Reverse []byte
}

// ApplyOptions are the optional inputs of Apply and ApplyPatch. A nil
// *ApplyOptions means all defaults.
type ApplyOptions struct {
	// Policy is the path policy; nil is the zero Policy.
	Policy *Policy
	// NoMerge makes drifted files fail with ErrDrift instead of being
	// merged.
	NoMerge bool
	// RequireBaseHead makes Apply fail with ErrDrift when the project's
	// HEAD is not the proposal's base.gitHead.
	RequireBaseHead bool
	// DryRun checks everything and computes the result (verdicts, and the
	// reverse patch with Reverse) without writing anything or recording
	// an event, except proposal_conflicted and proposal_apply_failed.
	DryRun bool
	// Reverse computes ApplyResult.Reverse, the patch for a one-step undo.
	Reverse bool
	// Durable syncs the staged files, the journal and the directories, so
	// that the project is never half-applied even after a power loss.
	// Without it, Apply is atomic against a crash of the process only.
	Durable bool
	// Instance, when set, receives the events; otherwise they go to
	// events.jsonl in the proposal directory (Apply only).
	Instance *workspace.Instance

	fs vfs.FS // for tests; nil is the operating system
}

// Apply reviews the proposal in dir (see Review) and brings it into
// ws.ProjectRoot atomically:
//
//  1. every path passes the path policy (ErrPathPolicy);
//  2. each file's before-image hash is compared with the project's file, and
//     base.gitHead with the project's HEAD, giving each file a Verdict;
//     drifted files are merged in memory from input/, work/ and the
//     project's file when the merge is clean (*ConflictError otherwise);
//  3. every hunk is applied in memory and every result checked against
//     its after-image hash, before anything is written;
//  4. new contents are staged in files beside their targets;
//  5. the plan is journaled under the state root, and the staged files are
//     renamed into place; a crash at any point is rolled back (or, once
//     committed, forward) by the next Apply or Recover.
//
// On any error the project is as it was, byte for byte, and the error says
// which file and why. With ApplyOptions.Reverse the result carries a
// reverse patch for a one-step undo. Events proposal_applied, proposal_conflicted or
// proposal_apply_failed are recorded.
//
// Apply checks ctx until it starts renaming; from then on it finishes.
// Two Applies to one project must not run at once. A change that replaces a
// file by a directory of the same name, or the reverse, is not supported:
// it fails with ErrDrift and changes nothing.
func Apply(ctx context.Context, ws workspace.Paths, dir string, opts *ApplyOptions) (*ApplyResult, error) {
	if opts == nil {
		opts = &ApplyOptions{}
	}
	r, err := review(dir, opts.Policy)
	if err != nil {
		return nil, err
	}
	res, err := apply(ctx, ws, r, r.units, opts)
	if err != nil {
		var ce *ConflictError
		typ := EventApplyFailed
		data := map[string]any{"error": err.Error()}
		if errors.As(err, &ce) {
			typ = EventConflicted
			var paths []string
			for _, f := range ce.Files {
				paths = append(paths, f.Path)
			}
			data["files"] = paths
		}
		return nil, errors.Join(err, emit(ctx, opts.Instance, dir, typ, r.Proposal, data))
	}
	verdicts := map[string]any{}
	for _, f := range res.Files {
		verdicts[f.Path] = string(f.Verdict)
	}
	if opts.DryRun {
		return res, nil
	}
	if err := emit(ctx, opts.Instance, dir, EventApplied, r.Proposal, map[string]any{"verdicts": verdicts, "reverseSha256": sha256Hex(res.Reverse), "head": res.Head}); err != nil {
		return res, err
	}
	return res, nil
}

// ApplyPatch applies a git patch (as git diff --binary writes it, or as
// Create does) to ws.ProjectRoot with the same path policy, checks and
// atomic commit as Apply. Without a proposal there are no before-image
// hashes: like git apply, a file must exist (or not, for a new file) and
// every hunk must match exactly, else the error wraps ErrDrift; no merge
// is attempted. No event is recorded unless opts.Instance is set.
func ApplyPatch(ctx context.Context, ws workspace.Paths, patch []byte, opts *ApplyOptions) (*ApplyResult, error) {
	if opts == nil {
		opts = &ApplyOptions{}
	}
	units, err := parsePatch(patch, opts.Policy, DefaultMaxFileBytes)
	if err != nil {
		return nil, err
	}
	return apply(ctx, ws, nil, units, opts)
}

// fileState is a path's state in the project.
type fileState struct {
	exists bool
	mode   uint32 // git mode
	perm   fs.FileMode
	data   []byte
	sum    string // sha256Hex(data), computed once
}

func (st *fileState) sha256() string {
	if st.sum == "" {
		st.sum = sha256Hex(st.data)
	}
	return st.sum
}

// op is one change of one path on disk.
type op struct {
	path   string // '/'-separated, relative
	old    fileState
	remove bool
	mode   uint32
	perm   fs.FileMode
	data   []byte
}

type applier struct {
	fs      vfs.FS
	root    string
	pol     *Policy
	r       *Report // nil for ApplyPatch
	sandbox string  // the sandbox directory, for merges
	opts    *ApplyOptions
	newDirs map[string]bool // directories to create, host paths
	// missingDirs are the project's directories (relative) that current
	// found missing; mu guards it.
	missingDirs map[string]bool
	mu          sync.Mutex
}

// workers is how many files are planned or staged at once: several on the
// operating system, one on a test file system, whose crash points must come
// in a deterministic order.
func (a *applier) workers() int {
	if a.opts.fs != nil {
		return 1
	}
	return 8
}

// each calls fn(0) … fn(n-1), a.workers() at a time (in order, on the
// calling goroutine, when that is one), and returns the first error. It
// stops starting calls when ctx is done, returning ctx.Err().
func (a *applier) each(ctx context.Context, n int, fn func(i int) error) error {
	if a.workers() == 1 {
		for i := range n {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(a.workers())
	for i := range n {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return fn(i) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

func (a *applier) host(rel string) string { return filepath.Join(a.root, filepath.FromSlash(rel)) }

// lstat is Lstat when the FS has it, else Stat.
func (a *applier) lstat(name string) (fs.FileInfo, error) {
	if l, ok := a.fs.(linkFS); ok {
		return l.Lstat(name)
	}
	return a.fs.Stat(name)
}

// current reads the project's state of rel, refusing parents that are
// symbolic links or files.
func (a *applier) current(rel string) (fileState, error) {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		d := strings.Join(parts[:i], "/")
		fi, err := a.lstat(a.host(d))
		if errors.Is(err, fs.ErrNotExist) {
			a.mu.Lock()
			for ; i < len(parts); i++ {
				a.missingDirs[strings.Join(parts[:i], "/")] = true
			}
			a.mu.Unlock()
			return fileState{}, nil
		} else if err != nil {
			return fileState{}, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fileState{}, &PolicyError{Path: rel, Reason: "its directory " + d + " is a symbolic link in the project; writing through it could leave the project"}
		}
		if !fi.IsDir() {
			return fileState{}, fmt.Errorf("%w: %s: %s is a file in the project, not a directory", ErrDrift, rel, d)
		}
	}
	name := a.host(rel)
	fi, err := a.lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return fileState{}, nil
	} else if err != nil {
		return fileState{}, err
	}
	st := fileState{exists: true, perm: fi.Mode().Perm()}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		link, err := a.fs.(linkFS).Readlink(name)
		if err != nil {
			return fileState{}, err
		}
		st.mode, st.data = modeSymlink, []byte(link)
	case fi.Mode().IsRegular():
		if fi.Size() > DefaultMaxFileBytes {
			return fileState{}, fmt.Errorf("%w: %s: %d bytes, over the %d-byte cap", ErrPatch, rel, fi.Size(), DefaultMaxFileBytes)
		}
		st.mode = modeFile
		if st.perm&0o100 != 0 {
			st.mode = modeExec
		}
		if st.data, err = vfs.ReadFile(a.fs, name); err != nil {
			return fileState{}, err
		}
	default:
		return fileState{}, fmt.Errorf("%w: %s is a %s in the project, not a file", ErrDrift, rel, fi.Mode().Type())
	}
	return st, nil
}

// patched applies the unit's hunks to old and returns the new content
// (nil for a deletion).
func patched(u *unit, old []byte) ([]byte, error) {
	src := old
	if u.del != nil {
		if err := applyFile(u.del, src, u.oldPath); err != nil {
			return nil, err
		}
		src = nil
	}
	if u.newPath == "" {
		return nil, applyFile(u.f, src, u.oldPath)
	}
	if u.f.IsBinary && u.f.OldOIDPrefix != "" && !u.f.IsNew && u.del == nil {
		if oid := diff.BlobID(src); !strings.HasPrefix(oid, u.f.OldOIDPrefix) {
			return nil, fmt.Errorf("%w: %s: binary patch is for blob %s, the file is %s", ErrDrift, u.path(), u.f.OldOIDPrefix, oid[:len(u.f.OldOIDPrefix)])
		}
	}
	var buf bytes.Buffer
	if err := gitdiff.Apply(&buf, bytes.NewReader(src), u.f); err != nil {
		return nil, fmt.Errorf("%w: %s: patch does not apply: %v", ErrDrift, u.path(), err)
	}
	return buf.Bytes(), nil
}

// applyFile applies a deletion, which must leave nothing.
func applyFile(f *gitdiff.File, src []byte, name string) error {
	if f.IsBinary {
		if f.OldOIDPrefix != "" && !strings.HasPrefix(diff.BlobID(src), f.OldOIDPrefix) {
			return fmt.Errorf("%w: %s: the file to delete is not the one the patch deletes", ErrDrift, name)
		}
		return nil
	}
	var buf bytes.Buffer
	if err := gitdiff.Apply(&buf, bytes.NewReader(src), f); err != nil {
		return fmt.Errorf("%w: %s: the file to delete is not the one the patch deletes: %v", ErrDrift, name, err)
	}
	if buf.Len() != 0 {
		return fmt.Errorf("%w: %s: the file to delete has content the patch does not remove", ErrDrift, name)
	}
	return nil
}

func apply(ctx context.Context, ws workspace.Paths, r *Report, units []*unit, opts *ApplyOptions) (*ApplyResult, error) {
	a := &applier{fs: opts.fs, root: ws.ProjectRoot, pol: opts.Policy, r: r, opts: opts, newDirs: map[string]bool{}, missingDirs: map[string]bool{}}
	if a.fs == nil {
		a.fs = osFS{vfs.OS}
	}
	if a.root == "" || !filepath.IsAbs(a.root) {
		return nil, fmt.Errorf("proposal: project root %q is not an absolute path", a.root)
	}
	jpath := journalPath(ws)
	if _, err := recoverJournal(a.fs, jpath, a.root); err != nil {
		return nil, err
	}
	res := &ApplyResult{}
	if opts.fs == nil {
		// An unreadable HEAD reads as none: the head then differs from
		// the base, which RequireBaseHead refuses.
		res.Head, _ = sandbox.GitHead(ctx, a.root)
	}
	if r != nil {
		res.ProposalID = r.Proposal.ID
		a.sandbox = filepath.Dir(r.Dir)
		if r.Proposal.Base.GitHead != "" && res.Head != r.Proposal.Base.GitHead {
			res.HeadMoved = true
			if opts.RequireBaseHead {
				return nil, fmt.Errorf("%w: HEAD is %q, the proposal was made on %s (RequireBaseHead)", ErrDrift, res.Head, r.Proposal.Base.GitHead)
			}
		}
	}
	var (
		ops       []*op
		conflicts []FileConflict
		errs      []error
	)
	// Plan every unit, in parallel on the operating system (reads and
	// hashing only; nothing is written while planning).
	type planned struct {
		ops  []*op
		v    Verdict
		fcon *FileConflict
		err  error
	}
	plans := make([]planned, len(units))
	if err := a.each(ctx, len(units), func(i int) error {
		var fc *FileChange
		if r != nil {
			fc = &r.Files[i].Change
		}
		p := &plans[i]
		p.ops, p.v, p.fcon, p.err = a.plan(units[i], fc)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("proposal: apply: %w", err)
	}
	for i, u := range units {
		uops, v, fcon, err := plans[i].ops, plans[i].v, plans[i].fcon, plans[i].err
		if err != nil {
			var pe *PolicyError
			if errors.As(err, &pe) {
				return nil, err
			}
			errs = append(errs, err)
			continue
		}
		if fcon != nil {
			conflicts = append(conflicts, *fcon)
			continue
		}
		fr := FileResult{Path: u.path(), Verdict: v}
		if u.oldPath != "" && u.newPath != "" && u.oldPath != u.newPath {
			fr.OldPath = u.oldPath
		}
		res.Files = append(res.Files, fr)
		ops = append(ops, uops...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(conflicts) > 0 {
		ce := &ConflictError{Files: conflicts}
		if r != nil {
			ce.ProposalID = r.Proposal.ID
		}
		return nil, ce
	}
	if err := a.checkLinks(ops); err != nil {
		return nil, err
	}
	if opts.Reverse {
		rev, err := reversePatch(ops)
		if err != nil {
			return nil, err
		}
		res.Reverse = rev
	}
	if opts.DryRun || len(ops) == 0 {
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("proposal: apply: %w", err)
	}
	if err := a.commit(jpath, res.ProposalID, ops); err != nil {
		return nil, err
	}
	return res, nil
}

// plan decides what to do with one unit.
func (a *applier) plan(u *unit, fc *FileChange) ([]*op, Verdict, *FileConflict, error) {
	var oldSt, newSt fileState
	var err error
	if u.oldPath != "" {
		if oldSt, err = a.current(u.oldPath); err != nil {
			return nil, "", nil, err
		}
	}
	if u.newPath != "" {
		if u.newPath == u.oldPath {
			newSt = oldSt
		} else if newSt, err = a.current(u.newPath); err != nil {
			return nil, "", nil, err
		}
	}
	drift := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrDrift, u.path(), fmt.Sprintf(format, args...))
	}
	// The target's mode after the change.
	newMode := u.newMode
	if newMode == 0 && u.newPath != "" {
		newMode = u.oldMode
		if newMode == 0 && fc != nil {
			newMode = parseMode(fc.NewMode)
		}
		if newMode == 0 {
			newMode = oldSt.mode
		}
	}
	mk := func(newData []byte) ([]*op, error) {
		var ops []*op
		if u.oldPath != "" && u.oldPath != u.newPath {
			ops = append(ops, &op{path: u.oldPath, old: oldSt, remove: true})
		}
		if u.newPath != "" {
			if newMode == modeSymlink {
				if err := a.pol.CheckSymlink(u.newPath, string(newData)); err != nil {
					return nil, err
				}
				if _, ok := a.fs.(linkFS); !ok {
					return nil, fmt.Errorf("proposal: %s: this file system has no symbolic links", u.newPath)
				}
			}
			perm := fs.FileMode(0o644)
			if newSt.exists && newSt.mode != modeSymlink {
				perm = newSt.perm
			}
			if newMode == modeExec {
				perm |= (perm&0o444)>>2 | 0o100
			} else {
				perm &^= 0o111
			}
			ops = append(ops, &op{path: u.newPath, old: newSt, mode: newMode, perm: perm, data: newData})
		}
		return ops, nil
	}
	if fc == nil {
		// A bare patch: exact application, like git apply.
		switch {
		case u.oldPath != "" && !oldSt.exists:
			return nil, "", nil, drift("does not exist in the project")
		case u.newPath != "" && u.newPath != u.oldPath && newSt.exists && u.del == nil:
			return nil, "", nil, drift("already exists in the project")
		case u.oldPath != "" && (oldSt.mode == modeSymlink) != (u.oldMode == modeSymlink) && u.oldMode != 0:
			return nil, "", nil, drift("the project has a %s, the patch expects mode %o", typeName(oldSt.mode), u.oldMode)
		}
		data, err := patched(u, oldSt.data)
		if err != nil {
			return nil, "", nil, err
		}
		ops, err := mk(data)
		return ops, Clean, nil, err
	}
	// A proposal: hashes decide.
	matches := func(st *fileState, hash string, mode string) bool {
		return st.exists && st.sha256() == hash && (mode == "" || (st.mode == modeSymlink) == (mode == ModeSymlink))
	}
	if fc.Status == Deleted {
		switch {
		case !oldSt.exists:
			return nil, AlreadyApplied, nil, nil
		case matches(&oldSt, fc.Before, fc.OldMode):
			if _, err := patched(u, oldSt.data); err != nil {
				return nil, "", nil, err
			}
			return []*op{{path: u.oldPath, old: oldSt, remove: true}}, Clean, nil, nil
		default:
			return nil, "", &FileConflict{Path: fc.Path, Reason: "deleted by the proposal but changed in the project"}, nil
		}
	}
	renamed := u.oldPath != "" && u.oldPath != u.newPath
	// Already applied: the target holds the after-image (and, for a
	// rename, the source is gone).
	if !renamed && u.oldPath != "" {
		newSt.sum = oldSt.sha256() // the same file: hash it once
	}
	if matches(&newSt, fc.After, fc.NewMode) && newSt.mode == newMode && (!renamed || !oldSt.exists) {
		return nil, AlreadyApplied, nil, nil
	}
	if fc.Status == Added || renamed {
		if newSt.exists {
			return nil, "", &FileConflict{Path: fc.Path, Reason: "the project already has a different file at this path"}, nil
		}
	}
	if fc.Status == Added {
		data, err := patched(u, nil)
		if err != nil {
			return nil, "", nil, err
		}
		if sha256Hex(data) != fc.After {
			return nil, "", nil, fmt.Errorf("%w: %s: the patch does not produce the after-image hash", ErrInvalid, fc.Path)
		}
		ops, err := mk(data)
		return ops, Clean, nil, err
	}
	if !oldSt.exists {
		return nil, "", &FileConflict{Path: fc.OldName(), Reason: "the proposal changes it but it was deleted in the project"}, nil
	}
	if matches(&oldSt, fc.Before, fc.OldMode) {
		data, err := patched(u, oldSt.data)
		if err != nil {
			return nil, "", nil, err
		}
		if sha256Hex(data) != fc.After {
			return nil, "", nil, fmt.Errorf("%w: %s: the patch does not produce the after-image hash", ErrInvalid, fc.Path)
		}
		ops, err := mk(data)
		return ops, Clean, nil, err
	}
	// Drift.
	if a.opts.NoMerge {
		return nil, "", nil, drift("changed in the project since the proposal was made (NoMerge)")
	}
	if fc.Binary || oldSt.mode == modeSymlink || newMode == modeSymlink || fc.OldMode == ModeSymlink {
		return nil, "", &FileConflict{Path: fc.Path, Reason: "changed in the project since the proposal was made, and binary files and symbolic links are not merged"}, nil
	}
	base, err1 := a.sandboxFile(a.r.Proposal.Paths.InputDir, fc.OldName(), fc.Before)
	theirs, err2 := a.sandboxFile(a.r.Proposal.Paths.WorkDir, fc.Path, fc.After)
	if err := errors.Join(err1, err2); err != nil {
		return nil, "", nil, drift("changed in the project since the proposal was made, and the sandbox no longer holds the base to merge with: %v", err)
	}
	merged, cs := diff.Merge3(base, oldSt.data, theirs)
	if len(cs) > 0 {
		fcon := &FileConflict{Path: fc.Path, Reason: "changed in the project and by the proposal in the same lines"}
		for _, c := range cs {
			fcon.Regions = append(fcon.Regions, Conflict{BaseStart: c.BaseStart, BaseEnd: c.BaseEnd, Base: c.Base, Ours: c.Ours, Theirs: c.Theirs})
		}
		return nil, "", fcon, nil
	}
	ops, err := mk(merged)
	return ops, Merged, nil, err
}

func typeName(mode uint32) string {
	if mode == modeSymlink {
		return "symbolic link"
	}
	return "regular file"
}

// sandboxFile reads a file of input/ or work/ and checks its hash.
func (a *applier) sandboxFile(dir, rel, hash string) ([]byte, error) {
	b, err := vfs.ReadFile(a.fs, filepath.Join(a.sandbox, dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	if sha256Hex(b) != hash {
		return nil, fmt.Errorf("%s/%s does not match the proposal's hash", dir, rel)
	}
	return b, nil
}

// reversePatch returns the patch that undoes ops.
func reversePatch(ops []*op) ([]byte, error) {
	var b bytes.Buffer
	sorted := append([]*op(nil), ops...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].path < sorted[j].path })
	for _, o := range sorted {
		d := &fileDiff{}
		if !o.remove {
			d.oldPath, d.oldMode, d.old = o.path, o.mode, o.data
		}
		if o.old.exists {
			d.newPath, d.newMode, d.new = o.path, o.old.mode, o.old.data
		}
		if d.oldMode != 0 && d.newMode != 0 && (d.oldMode == modeSymlink) != (d.newMode == modeSymlink) {
			if _, _, err := writeFileDiff(&b, &fileDiff{oldPath: o.path, oldMode: d.oldMode, old: d.old}, DefaultContext); err != nil {
				return nil, err
			}
			d.oldPath, d.oldMode, d.old = "", 0, nil
		}
		if _, _, err := writeFileDiff(&b, d, DefaultContext); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// checkLinks resolves every symbolic link the ops create as the kernel
// would once they are applied: over the project's links and files with the
// ops laid over them, so a link may not leave the project through another
// link, whether the project has it or the same patch adds it. When the ops
// create links, the project's own links are resolved again too: one that
// stays inside before the patch must not leave after it (say through a
// directory the patch turns into a link to "..").
func (a *applier) checkLinks(ops []*op) error {
	over := map[string]*op{}
	dirs := map[string]bool{}
	var links []*op
	for _, o := range ops {
		if o.remove {
			if _, ok := over[o.path]; !ok {
				over[o.path] = o
			}
			continue
		}
		over[o.path] = o
		for d := parentOf(o.path); d != ""; d = parentOf(d) {
			dirs[d] = true
		}
		if o.mode == modeSymlink {
			links = append(links, o)
		}
	}
	if len(links) == 0 {
		return nil
	}
	lfs, ok := a.fs.(linkFS)
	if !ok {
		return nil // plan refused the links already
	}
	disk := func(rel string) (exists, dir bool, target string, isLink bool) {
		name := a.host(rel)
		fi, err := lfs.Lstat(name)
		if err != nil {
			return false, false, "", false
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			t, err := lfs.Readlink(name)
			return err == nil, false, t, err == nil
		}
		return true, fi.IsDir(), "", false
	}
	after := func(rel string) (exists, dir bool, target string, isLink bool) {
		if o, ok := over[rel]; ok {
			switch {
			case o.remove:
				return false, false, "", false
			case o.mode == modeSymlink:
				return true, false, string(o.data), true
			}
			return true, false, "", false
		}
		if dirs[rel] {
			return true, true, "", false
		}
		return disk(rel)
	}
	for _, o := range links {
		if err := a.pol.checkLinkIn(o.path, string(o.data), after); err != nil {
			return err
		}
	}
	// The project's links that the ops leave in place.
	var errs []error
	var walk func(rel string)
	walk = func(rel string) {
		ents, err := a.fs.ReadDir(a.host(rel))
		if err != nil {
			return
		}
		for _, e := range ents {
			p := path.Join(rel, e.Name())
			if rel == "" {
				p = e.Name()
			}
			switch {
			case e.IsDir():
				if normElement(e.Name()) != ".git" {
					walk(p)
				}
			case e.Type()&fs.ModeSymlink != 0:
				if _, ok := over[p]; ok {
					continue
				}
				t, err := lfs.Readlink(a.host(p))
				if err != nil {
					continue
				}
				before, _, err := linkres.Resolve(p, t, disk)
				if errors.Is(err, linkres.ErrEscape) {
					continue // already leaves: the project's business, not the patch's
				}
				res, _, err := linkres.Resolve(p, t, after)
				reason := ""
				switch {
				case errors.Is(err, linkres.ErrEscape):
					reason = "it would leave the project"
				case err == nil && res != "" && res != before:
					if perr := (*Policy)(nil).CheckPath(res); perr != nil {
						reason = "it would resolve to " + res + ", refused: " + perr.(*PolicyError).Reason
					}
				}
				if reason != "" {
					errs = append(errs, &PolicyError{Path: p, Reason: "the project's symbolic link to " + strconv.Quote(t) + " goes through the links this patch adds: " + reason})
				}
			}
		}
	}
	walk("")
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// linkFS is what a file system needs for symbolic links.
type linkFS interface {
	Lstat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
	Symlink(oldname, newname string) error
}

// osFS is the operating system with symbolic links.
type osFS struct{ vfs.FS }

func (osFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }
func (osFS) Readlink(name string) (string, error)   { return os.Readlink(name) }
func (osFS) Symlink(oldname, newname string) error  { return os.Symlink(oldname, newname) }

func randomToken() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
