package proposal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/paddockdev/paddock/internal/diff"
	"github.com/paddockdev/paddock/internal/vfs"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/workspace"
)

// Defaults of CreateOptions.
const (
	DefaultContext         = 3
	DefaultMaxBinaryBytes  = 8 << 20
	DefaultRenameThreshold = 50
	// maxRenamePairs bounds the similarity comparisons of rename
	// detection, like git's diff.renameLimit (1000 sources × 1000
	// destinations).
	maxRenamePairs = 1000 * 1000
)

// CreateOptions are the optional inputs of Create. A nil *CreateOptions means
// all defaults.
type CreateOptions struct {
	// Notes are the worker's notes, kept in proposal.json and summary.md.
	Notes string
	// TestLog, when not nil, is the worker's test output, written as
	// test.log.
	TestLog []byte
	// Context is the number of context lines around changes; 0 means
	// DefaultContext (3, like git).
	Context int
	// MaxBinaryBytes caps the size of a binary file carried in the patch;
	// a larger binary change is reported in Proposal.Excluded instead.
	// 0 means DefaultMaxBinaryBytes (8 MiB); negative means no cap.
	MaxBinaryBytes int64
	// RenameThreshold is the similarity (0–100) from which a deleted and
	// an added file are a rename, like git's -M; 0 means
	// DefaultRenameThreshold (50). Negative detects exact renames only.
	RenameThreshold int
	// Exclude lists more directory names (matched on every path element,
	// ignoring case) whose new files are reported, not proposed, on top of
	// .git, node_modules and dist.
	Exclude []string
	// Allow lists default-excluded names ("node_modules", "dist") whose
	// new files are proposed after all, like sandbox.PrepareOptions.Allow.
	// ".git" cannot be allowed.
	Allow []string
	// Durable syncs the proposal's files and directory before Create
	// returns.
	Durable bool
	// Instance, when set, receives the proposal_created event as a
	// runtime event; otherwise it goes to events.jsonl in the proposal
	// directory.
	Instance *workspace.Instance
	// Now returns the creation time; nil means time.Now.
	Now func() time.Time
}

func (o *CreateOptions) context() int {
	if o == nil || o.Context <= 0 {
		return DefaultContext
	}
	return o.Context
}

// baseFile is one file of the baseline, from the manifest.
type baseFile struct {
	mode    uint32 // git mode
	size    int64
	mtime   time.Time
	perm    fs.FileMode
	sha256  string
	link    string // for symbolic links
	symlink bool
	seen    bool // found in work/
}

// treeDiff is the result of comparing input/ with work/.
type treeDiff struct {
	diffs    []*fileDiff
	excluded []Excluded
}

// Create diffs the sandbox's input/ against work/ and writes the proposal
// into its proposal/ directory: changes.patch (a git patch with paths
// relative to the project, which git apply accepts), proposal.json,
// summary.md, and test.log when opts.TestLog is set. The files are replaced
// atomically, proposal.json last, so a reader never sees a proposal.json
// whose patch is not there.
//
// Only files whose size, modification time or executable bit differ from
// the manifest are read. Files the worker added in a blocked directory
// (.git, node_modules, dist, or opts.Exclude), special files, symbolic links
// the zero Policy refuses (CheckSymlink, and the target resolved as the
// kernel would over work/: a link that leaves through another link) and
// binary files over the cap are listed in Proposal.Excluded, not silently
// dropped. A baseline file in input/ whose content no longer matches the
// manifest is an error: the baseline was tampered with. Files are read
// through os.Root and must be, once opened, the regular file the path
// names: a file swapped for a symbolic link while Create runs (a worker
// still running) is an error, and nothing outside work/ is read.
//
// Create checks ctx between files; when ctx is done it returns an error
// wrapping ctx.Err() and leaves any earlier proposal as it was.
func Create(ctx context.Context, sb *sandbox.Prepared, opts *CreateOptions) (*Proposal, error) {
	if opts == nil {
		opts = &CreateOptions{}
	}
	m := sb.Manifest()
	dirs := sb.Dirs()
	base := make(map[string]*baseFile, len(m.Files)+len(m.Symlinks))
	entries := make([]baseFile, len(m.Files)+len(m.Symlinks)) // one allocation
	for i, f := range m.Files {
		mode := modeFile
		if f.Mode&0o100 != 0 {
			mode = modeExec
		}
		entries[i] = baseFile{mode: mode, size: f.Size, mtime: f.ModTime, perm: f.Mode, sha256: f.SHA256}
		base[f.Path] = &entries[i]
	}
	for i, l := range m.Symlinks {
		b := &entries[len(m.Files)+i]
		*b = baseFile{mode: modeSymlink, link: l.Link, symlink: true, sha256: sha256Hex([]byte(l.Link))}
		base[l.Path] = b
	}
	td, err := diffTrees(ctx, dirs.Input, dirs.Work, base, opts)
	if err != nil {
		return nil, err
	}
	var patch bytes.Buffer
	changes, err := writePatch(&patch, td, opts)
	if err != nil {
		return nil, err
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	p := &Proposal{
		Schema:    Schema,
		Version:   Version,
		RunID:     m.RunID,
		AgentID:   m.AgentID,
		CreatedAt: now().UTC(),
		Base:      Base{GitHead: m.Base.GitHead},
		Paths: Paths{
			InputDir:    "input",
			WorkDir:     "work",
			PatchFile:   "proposal/" + PatchFile,
			SummaryFile: "proposal/" + SummaryFile,
		},
		ChangedFiles: changes,
		Excluded:     td.excluded,
		PatchSHA256:  sha256Hex(patch.Bytes()),
		Notes:        opts.Notes,
	}
	if opts.TestLog != nil {
		p.Paths.TestLog = "proposal/" + TestLogFile
		p.TestLogSHA256 = sha256Hex(opts.TestLog)
	}
	if p.ID, err = p.computeID(); err != nil {
		return nil, err
	}
	js, err := p.Marshal()
	if err != nil {
		return nil, err
	}
	out := dirs.Proposal
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("proposal: %w", err)
	}
	files := []struct {
		name string
		data []byte
	}{
		{PatchFile, patch.Bytes()},
		{SummaryFile, []byte(Summary(p))},
	}
	if opts.TestLog != nil {
		files = append(files, struct {
			name string
			data []byte
		}{TestLogFile, opts.TestLog})
	}
	files = append(files, struct {
		name string
		data []byte
	}{JSONFile, js})
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("proposal: create: %w", err)
		}
		if err := vfs.WriteFileAtomic(vfs.OS, filepath.Join(out, f.name), f.data, 0o644, opts.Durable); err != nil {
			return nil, fmt.Errorf("proposal: write %s: %w", f.name, err)
		}
	}
	if err := emit(ctx, opts.Instance, out, EventCreated, p, map[string]any{
		"patchSha256": p.PatchSHA256, "files": len(p.ChangedFiles), "excluded": len(p.Excluded),
	}); err != nil {
		return nil, err
	}
	return p, nil
}

var defaultBlocked = []string{".git", "node_modules", "dist"}

// testHookAfterWalk, when set by a test, runs between the walk of work/
// and the reads: where a worker still running could swap files.
var testHookAfterWalk func(workDir string)

// createWorkers is how many goroutines stat and read work/ at once.
const createWorkers = 8

// diffTrees compares the baseline (described by base, with contents in
// inputDir) with workDir.
func diffTrees(ctx context.Context, inputDir, workDir string, base map[string]*baseFile, opts *CreateOptions) (*treeDiff, error) {
	blocked := map[string]bool{}
	for _, b := range append(defaultBlocked, opts.Exclude...) {
		blocked[strings.ToLower(b)] = true
	}
	for _, a := range opts.Allow {
		if a := strings.ToLower(a); a != ".git" {
			delete(blocked, a)
		}
	}
	// Directories that hold baseline files are walked even when blocked:
	// the host allowed them at Prepare.
	baseDirs := map[string]bool{}
	for p := range base {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if baseDirs[d] {
				break
			}
			baseDirs[d] = true
		}
	}
	workRoot, err := os.OpenRoot(workDir)
	if err != nil {
		return nil, fmt.Errorf("proposal: open work/: %w", err)
	}
	defer workRoot.Close()
	inRoot, err := os.OpenRoot(inputDir)
	if err != nil {
		return nil, fmt.Errorf("proposal: open input/: %w", err)
	}
	defer inRoot.Close()
	td := &treeDiff{}
	var added, deleted []*fileDiff
	readInput := func(p string, b *baseFile) ([]byte, error) {
		if b.symlink {
			return []byte(b.link), nil
		}
		data, err := readRegular(inRoot, p)
		if err != nil {
			return nil, fmt.Errorf("read baseline: %w", err)
		}
		if sha256Hex(data) != b.sha256 {
			return nil, errors.New("the baseline copy does not match the manifest's hash: input/ was modified; prepare the sandbox again")
		}
		return data, nil
	}
	// Walk work/ (names and types only), then look at the entries in
	// parallel: stat, and read only what changed.
	type walked struct {
		rel, full string
		typ       fs.FileMode
		base      *baseFile
		// results
		diff     *fileDiff // a change of a baseline file
		add      *fileDiff // a new file
		excluded *Excluded
		err      error
	}
	entries := make([]walked, 0, len(base)+16)
	n := 0
	err = filepath.WalkDir(workDir, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n++; n%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if full == workDir {
			return nil
		}
		rel := filepath.ToSlash(full[len(workDir)+1:])
		if d.IsDir() {
			if blocked[strings.ToLower(d.Name())] && !baseDirs[rel] {
				td.excluded = append(td.excluded, Excluded{Path: rel + "/", Reason: "directory " + d.Name() + " is excluded by the sandbox policy"})
				return filepath.SkipDir
			}
			return nil
		}
		b := base[rel]
		if b != nil {
			b.seen = true
		}
		entries = append(entries, walked{rel: rel, full: full, typ: d.Type(), base: b})
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("proposal: create: %w", ctx.Err())
		}
		return nil, fmt.Errorf("proposal: diff work/: %w", err)
	}
	if testHookAfterWalk != nil {
		testHookAfterWalk(workDir)
	}
	look := func(w *walked) error {
		rel, full, b := w.rel, w.full, w.base
		switch {
		case w.typ.IsRegular():
			size, mtime, perm, err := lstatQuick(full)
			if err != nil {
				return err
			}
			mode := modeFile
			if perm&0o100 != 0 {
				mode = modeExec
			}
			if b != nil && !b.symlink && b.size == size && b.mtime.Equal(mtime) && b.mode == mode {
				return nil // unchanged: not read
			}
			data, err := readRegular(workRoot, rel)
			if err != nil {
				return err
			}
			if b == nil {
				w.add = &fileDiff{newPath: rel, newMode: mode, new: data}
				return nil
			}
			if !b.symlink && b.mode == mode && sha256Hex(data) == b.sha256 {
				return nil
			}
			old, err := readInput(rel, b)
			if err != nil {
				return err
			}
			w.diff = &fileDiff{oldPath: rel, newPath: rel, oldMode: b.mode, newMode: mode, old: old, new: data}
		case w.typ&fs.ModeSymlink != 0:
			link, err := os.Readlink(full)
			if err != nil {
				return err
			}
			if err := checkWorkLink(workDir, rel, link); err != nil {
				w.excluded = &Excluded{Path: rel, Reason: err.(*PolicyError).Reason}
				return nil
			}
			if b == nil {
				w.add = &fileDiff{newPath: rel, newMode: modeSymlink, new: []byte(link)}
				return nil
			}
			if b.symlink && b.link == link {
				return nil
			}
			old, err := readInput(rel, b)
			if err != nil {
				return err
			}
			w.diff = &fileDiff{oldPath: rel, newPath: rel, oldMode: b.mode, newMode: modeSymlink, old: old, new: []byte(link)}
		default:
			w.excluded = &Excluded{Path: rel, Reason: "not a regular file or symbolic link (" + w.typ.String() + ")"}
		}
		return nil
	}
	var g errgroup.Group
	g.SetLimit(createWorkers)
	for i := 0; i < len(entries); i += 64 {
		chunk := entries[i:min(i+64, len(entries))]
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("proposal: create: %w", err)
			}
			for k := range chunk {
				w := &chunk[k]
				if err := look(w); err != nil {
					return fmt.Errorf("proposal: %s: %w", w.rel, err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for k := range entries {
		w := &entries[k]
		switch {
		case w.diff != nil:
			td.diffs = append(td.diffs, w.diff)
		case w.add != nil:
			added = append(added, w.add)
		case w.excluded != nil:
			td.excluded = append(td.excluded, *w.excluded)
		}
	}
	for p, b := range base {
		if b.seen {
			continue
		}
		old, err := readInput(p, b)
		if err != nil {
			return nil, fmt.Errorf("proposal: %s: %w", p, err)
		}
		deleted = append(deleted, &fileDiff{oldPath: p, oldMode: b.mode, old: old})
	}
	sort.Slice(deleted, func(i, j int) bool { return deleted[i].oldPath < deleted[j].oldPath })
	sort.Slice(added, func(i, j int) bool { return added[i].newPath < added[j].newPath })
	td.diffs = append(td.diffs, detectRenames(added, deleted, opts)...)
	sort.Slice(td.diffs, func(i, j int) bool { return diffKey(td.diffs[i]) < diffKey(td.diffs[j]) })
	sort.Slice(td.excluded, func(i, j int) bool { return td.excluded[i].Path < td.excluded[j].Path })
	return td, nil
}

func diffKey(d *fileDiff) string {
	if d.newPath != "" {
		return d.newPath
	}
	return d.oldPath
}

// checkWorkLink returns a *PolicyError when Apply would refuse the link at
// rel with target link: CheckSymlink of the zero Policy, and the target
// resolved as the kernel would over work/'s files and links.
func checkWorkLink(workDir, rel, link string) error {
	var pol Policy
	if err := pol.CheckSymlink(rel, link); err != nil {
		return err
	}
	return pol.checkLinkIn(rel, link, func(r string) (exists, dir bool, target string, isLink bool) {
		name := filepath.Join(workDir, filepath.FromSlash(r))
		fi, err := os.Lstat(name)
		if err != nil {
			return false, false, "", false
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			t, err := os.Readlink(name)
			return err == nil, false, t, err == nil
		}
		return true, fi.IsDir(), "", false
	})
}

// readRegular reads the regular file rel of root. The file is opened
// through root (so nothing outside root is ever opened), and then must be
// a regular file and the very file the path names once opened: a worker
// still running in the sandbox may swap a file it wrote for a symbolic
// link (to another file, or to a host file through a link root follows)
// between the walk and the read, and that is an error, not content.
func readRegular(root *os.Root, rel string) ([]byte, error) {
	name := filepath.FromSlash(rel)
	f, err := root.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	li, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || !li.Mode().IsRegular() || !os.SameFile(fi, li) {
		return nil, fmt.Errorf("%s changed while Create read it (now a %s): is the worker still running? stop it and create the proposal again", rel, li.Mode().Type())
	}
	return io.ReadAll(f)
}

// detectRenames pairs deleted and added regular files into renames, exact
// ones first, then by similarity, and returns every diff.
func detectRenames(added, deleted []*fileDiff, opts *CreateOptions) []*fileDiff {
	var out []*fileDiff
	usedA := make([]bool, len(added))
	usedD := make([]bool, len(deleted))
	byHash := map[string][]int{}
	for i, d := range deleted {
		// Like git, empty files are never renames.
		if d.oldMode != modeSymlink && len(d.old) > 0 {
			h := sha256Hex(d.old)
			byHash[h] = append(byHash[h], i)
		}
	}
	for i, a := range added {
		if a.newMode == modeSymlink || len(a.new) == 0 {
			continue
		}
		h := sha256Hex(a.new)
		if ids := byHash[h]; len(ids) > 0 {
			j := ids[0]
			byHash[h] = ids[1:]
			usedA[i], usedD[j] = true, true
			out = append(out, &fileDiff{oldPath: deleted[j].oldPath, newPath: a.newPath, oldMode: deleted[j].oldMode, newMode: a.newMode, old: deleted[j].old, new: a.new, score: 100})
		}
	}
	threshold := DefaultRenameThreshold
	if opts.RenameThreshold > 0 {
		threshold = min(opts.RenameThreshold, 100)
	}
	var ra, rd []int
	for i, a := range added {
		if !usedA[i] && a.newMode != modeSymlink && len(a.new) > 0 && !isBinaryPair(nil, a.new) {
			ra = append(ra, i)
		}
	}
	for j, d := range deleted {
		if !usedD[j] && d.oldMode != modeSymlink && len(d.old) > 0 && !isBinaryPair(d.old, nil) {
			rd = append(rd, j)
		}
	}
	if opts.RenameThreshold >= 0 && len(ra) > 0 && len(rd) > 0 && len(ra)*len(rd) <= maxRenamePairs {
		type cand struct{ score, a, d int }
		var cands []cand
		for _, i := range ra {
			for _, j := range rd {
				la, ld := len(added[i].new), len(deleted[j].old)
				// Sizes too far apart cannot reach the threshold.
				if min(la, ld)*100 < max(la, ld)*threshold {
					continue
				}
				if s := diff.Similarity(deleted[j].old, added[i].new); s >= threshold {
					cands = append(cands, cand{s, i, j})
				}
			}
		}
		sort.SliceStable(cands, func(x, y int) bool { return cands[x].score > cands[y].score })
		for _, c := range cands {
			if usedA[c.a] || usedD[c.d] {
				continue
			}
			usedA[c.a], usedD[c.d] = true, true
			d, a := deleted[c.d], added[c.a]
			out = append(out, &fileDiff{oldPath: d.oldPath, newPath: a.newPath, oldMode: d.oldMode, newMode: a.newMode, old: d.old, new: a.new, score: c.score})
		}
	}
	for i, a := range added {
		if !usedA[i] {
			out = append(out, a)
		}
	}
	for j, d := range deleted {
		if !usedD[j] {
			out = append(out, d)
		}
	}
	return out
}

// writePatch writes every diff of td into w and returns the file changes.
func writePatch(w *bytes.Buffer, td *treeDiff, opts *CreateOptions) ([]FileChange, error) {
	maxBin := int64(DefaultMaxBinaryBytes)
	if opts.MaxBinaryBytes != 0 {
		maxBin = opts.MaxBinaryBytes
	}
	ctxLines := opts.context()
	var changes []FileChange
	for _, d := range td.diffs {
		if maxBin >= 0 && (int64(len(d.old)) > maxBin || int64(len(d.new)) > maxBin) && isBinaryPair(d.old, d.new) {
			td.excluded = append(td.excluded, Excluded{Path: diffKey(d), Reason: fmt.Sprintf("binary file over the %d-byte cap (MaxBinaryBytes)", maxBin)})
			continue
		}
		c := FileChange{Path: diffKey(d)}
		switch {
		case d.oldMode == 0:
			c.Status = Added
		case d.newMode == 0:
			c.Status = Deleted
		case d.oldPath != d.newPath:
			c.Status, c.OldPath, c.Similarity = Renamed, d.oldPath, d.score
		default:
			c.Status = Modified
		}
		if d.oldMode != 0 {
			c.OldMode, c.Before = gitModeString(d.oldMode), sha256Hex(d.old)
		}
		if d.newMode != 0 {
			c.NewMode, c.After = gitModeString(d.newMode), sha256Hex(d.new)
		}
		var (
			st     diff.Stats
			binary bool
			err    error
		)
		if d.oldMode != 0 && d.newMode != 0 && (d.oldMode == modeSymlink) != (d.newMode == modeSymlink) {
			// A type change is a deletion and an addition, as git writes it.
			if _, b1, err := writeFileDiff(w, &fileDiff{oldPath: d.oldPath, oldMode: d.oldMode, old: d.old}, ctxLines); err != nil {
				return nil, err
			} else {
				binary = b1
			}
			var b2 bool
			st, b2, err = writeFileDiff(w, &fileDiff{newPath: d.newPath, newMode: d.newMode, new: d.new}, ctxLines)
			binary = binary || b2
			st.Deleted += countLines(d.old)
		} else {
			st, binary, err = writeFileDiff(w, d, ctxLines)
		}
		if err != nil {
			return nil, fmt.Errorf("proposal: diff %s: %w", c.Path, err)
		}
		c.LinesAdded, c.LinesDeleted, c.Binary = st.Added, st.Deleted, binary
		changes = append(changes, c)
	}
	sort.Slice(td.excluded, func(i, j int) bool { return td.excluded[i].Path < td.excluded[j].Path })
	return changes, nil
}

func countLines(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	n := bytes.Count(b, []byte{'\n'})
	if b[len(b)-1] != '\n' {
		n++
	}
	return n
}
