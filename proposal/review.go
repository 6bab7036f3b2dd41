package proposal

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/paddockdev/paddock/workspace"
)

// ReviewOptions are the optional inputs of Review. A nil *ReviewOptions
// means all defaults.
type ReviewOptions struct {
	// Policy is the path policy the patch must pass; nil is the zero
	// Policy.
	Policy *Policy
	// Instance, when set, receives the proposal_reviewed event; otherwise
	// it goes to events.jsonl in the proposal directory.
	Instance *workspace.Instance
}

// A Report is what Review found: the validated proposal and, for each
// changed file, what the patch does to it.
type Report struct {
	Proposal *Proposal
	// Dir is the proposal directory.
	Dir string
	// Files follow Proposal.ChangedFiles.
	Files []ReviewFile
	// Patch is changes.patch, verified against Proposal.PatchSHA256.
	Patch []byte
	// TestLog is test.log, when the proposal has one.
	TestLog []byte

	units []*unit // parallel to Files
}

// A ReviewFile is one changed file as the reviewer sees it.
type ReviewFile struct {
	Change FileChange
	// Hunks is the number of text hunks (0 for binary files, links and
	// mode changes).
	Hunks int
	// Diff is this file's part of the patch, as git formats it.
	Diff string
}

// Review loads the proposal in dir (a sandbox's proposal/ directory) and
// validates it: proposal.json's schema, version and content-addressed id;
// the hashes of changes.patch and test.log; that the patch parses, passes the
// path policy, and matches changedFiles one to one (paths, statuses, modes);
// and that applying each file's hunks to its before-image, when input/ still
// holds it, gives its after-image hash. It returns a *Report for the
// reviewer, and records a proposal_reviewed event.
//
// Errors wrap ErrInvalid (a proposal that does not hold together),
// ErrPatch (a patch that does not parse or apply) or ErrPathPolicy.
func Review(ctx context.Context, dir string, opts *ReviewOptions) (*Report, error) {
	if opts == nil {
		opts = &ReviewOptions{}
	}
	r, err := review(dir, opts.Policy)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("proposal: review: %w", err)
	}
	if err := emit(ctx, opts.Instance, dir, EventReviewed, r.Proposal, map[string]any{"files": len(r.Files)}); err != nil {
		return nil, err
	}
	return r, nil
}

func review(dir string, pol *Policy) (*Report, error) {
	p, err := Load(dir)
	if err != nil {
		return nil, err
	}
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("proposal: %s: %w: %s", dir, ErrInvalid, fmt.Sprintf(format, args...))
	}
	if p.Paths.PatchFile != "proposal/"+PatchFile || (p.Paths.TestLog != "" && p.Paths.TestLog != "proposal/"+TestLogFile) {
		return nil, invalid("unexpected file names in paths: %q, %q", p.Paths.PatchFile, p.Paths.TestLog)
	}
	for _, d := range []string{p.Paths.InputDir, p.Paths.WorkDir} {
		if d == "" || strings.ContainsAny(d, `/\`) || d == "." || d == ".." {
			return nil, invalid("paths.inputDir and paths.workDir must be plain directory names, got %q", d)
		}
	}
	patch, err := os.ReadFile(filepath.Join(dir, PatchFile))
	if err != nil {
		return nil, fmt.Errorf("proposal: %w", err)
	}
	if h := sha256Hex(patch); h != p.PatchSHA256 {
		return nil, invalid("%s has hash %s, proposal.json says %s: the patch was changed after Create", PatchFile, h, p.PatchSHA256)
	}
	r := &Report{Proposal: p, Dir: dir, Patch: patch}
	if p.Paths.TestLog != "" {
		if r.TestLog, err = os.ReadFile(filepath.Join(dir, TestLogFile)); err != nil {
			return nil, fmt.Errorf("proposal: %w", err)
		}
		if h := sha256Hex(r.TestLog); h != p.TestLogSHA256 {
			return nil, invalid("%s has hash %s, proposal.json says %s", TestLogFile, h, p.TestLogSHA256)
		}
	}
	units, err := parsePatch(patch, pol, DefaultMaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("proposal: %s: %w", dir, err)
	}
	if len(units) != len(p.ChangedFiles) {
		return nil, invalid("the patch changes %d file(s), changedFiles lists %d", len(units), len(p.ChangedFiles))
	}
	sections := splitSections(patch, units)
	byPath := make(map[string]*unit, len(units))
	for _, u := range units {
		byPath[u.path()] = u
	}
	for _, c := range p.ChangedFiles {
		u := byPath[c.Path]
		if u == nil {
			return nil, invalid("changedFiles lists %s, which the patch does not change", c.Path)
		}
		if err := matchChange(c, u); err != nil {
			return nil, invalid("%s: %v", c.Path, err)
		}
		if err := pol.CheckPath(c.Path); err != nil {
			return nil, err
		}
		if err := checkAgainstInput(filepath.Join(filepath.Dir(dir), p.Paths.InputDir), c, u); err != nil {
			return nil, invalid("%s: %v", c.Path, err)
		}
		rf := ReviewFile{Change: c, Diff: sections[u.f]}
		if u.del != nil {
			rf.Diff = sections[u.del] + rf.Diff
		}
		rf.Hunks = len(u.f.TextFragments)
		r.Files = append(r.Files, rf)
		r.units = append(r.units, u)
	}
	return r, nil
}

// matchChange checks that a patch unit does what a FileChange says.
func matchChange(c FileChange, u *unit) error {
	var st Status
	switch {
	case u.oldPath == "":
		st = Added
	case u.newPath == "":
		st = Deleted
	case u.oldPath != u.newPath:
		st = Renamed
	default:
		st = Modified
	}
	if st != c.Status {
		return fmt.Errorf("status %s, but the patch makes it %s", c.Status, st)
	}
	if u.oldPath != "" && u.oldPath != c.OldName() {
		return fmt.Errorf("old path %s, but the patch has %s", c.OldName(), u.oldPath)
	}
	want := parseMode
	if c.Status != Added && u.oldMode != 0 && u.oldMode != want(c.OldMode) {
		return fmt.Errorf("old mode %s, but the patch has %o", c.OldMode, u.oldMode)
	}
	if c.Status != Deleted && u.newMode != 0 && u.newMode != want(c.NewMode) {
		return fmt.Errorf("new mode %s, but the patch has %o", c.NewMode, u.newMode)
	}
	if (c.Status != Added && c.Before == "") || (c.Status != Deleted && c.After == "") {
		return fmt.Errorf("missing content hashes")
	}
	return nil
}

// parseMode parses a git mode such as "100644"; it returns 0 for anything
// else.
func parseMode(m string) uint32 {
	v, err := strconv.ParseUint(m, 8, 32)
	if err != nil {
		return 0
	}
	return uint32(v)
}

// splitSections maps each parsed file of units to its text in patch: the
// lines from its "diff --git" header to the next one.
func splitSections(patch []byte, units []*unit) map[*gitdiff.File]string {
	var files []*gitdiff.File
	for _, u := range units {
		if u.del != nil {
			files = append(files, u.del)
		}
		files = append(files, u.f)
	}
	var starts []int
	for i := 0; i < len(patch); {
		if bytes.HasPrefix(patch[i:], []byte("diff --git ")) {
			starts = append(starts, i)
		}
		j := bytes.IndexByte(patch[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
	}
	out := make(map[*gitdiff.File]string, len(files))
	if len(starts) != len(files) {
		for _, f := range files {
			out[f] = f.String()
		}
		return out
	}
	starts = append(starts, len(patch))
	for k, f := range files {
		out[f] = string(patch[starts[k]:starts[k+1]])
	}
	return out
}

// checkAgainstInput applies u to the file's before-image in input/, when
// input/ holds it, and checks the result against the after-image hash.
func checkAgainstInput(input string, c FileChange, u *unit) error {
	var old []byte
	if c.Status != Added {
		name := filepath.Join(input, filepath.FromSlash(c.OldName()))
		fi, err := os.Lstat(name)
		if err != nil {
			return nil // no baseline to check with: Apply checks the result
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			l, err := os.Readlink(name)
			if err != nil {
				return nil
			}
			old = []byte(l)
		} else if fi.Mode().IsRegular() && fi.Size() <= DefaultMaxFileBytes {
			if old, err = os.ReadFile(name); err != nil {
				return nil
			}
		} else {
			return nil
		}
		if sha256Hex(old) != c.Before {
			return nil
		}
	}
	data, err := patched(u, old)
	if err != nil {
		return fmt.Errorf("the patch does not apply to the before-image in input/: %v", err)
	}
	if c.Status != Deleted && sha256Hex(data) != c.After {
		return fmt.Errorf("the patch does not produce the after-image hash %s", c.After)
	}
	return nil
}
