package proposal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/paddockdev/paddock/internal/vfs"
	"github.com/paddockdev/paddock/workspace"
)

// The journal's states.
const (
	stateStaging   = "staging"   // staged files may exist; nothing renamed
	statePrepared  = "prepared"  // every staged file is written; renames may have started
	stateCommitted = "committed" // every rename is done; only cleanup is left
)

// JournalSchema identifies the apply journal.
const JournalSchema = "paddock.proposal.journal"

// ErrJournal is wrapped by Apply's and Recover's errors for an apply
// journal that cannot be read or does not describe the project.
var ErrJournal = errors.New("proposal: unusable apply journal")

// journal is the plan of one Apply, written before any rename.
type journal struct {
	Schema      string      `json:"schema"`
	Version     int         `json:"version"`
	State       string      `json:"state"`
	ProjectRoot string      `json:"projectRoot"`
	ProposalID  string      `json:"proposalId,omitempty"`
	Ops         []journalOp `json:"ops"`
	// Dirs are the directories Apply creates, parents first.
	Dirs []string `json:"dirs,omitempty"`
}

// journalOp is one target: Stage is renamed onto Target, after Target (when
// it exists) is renamed to Backup. All are host paths in one directory.
type journalOp struct {
	Target string `json:"target"`
	Stage  string `json:"stage,omitempty"`
	Backup string `json:"backup,omitempty"`
}

func journalPath(ws workspace.Paths) string {
	return filepath.Join(ws.WorkspaceDir(), "proposal-apply.json")
}

// Recover finishes or undoes an Apply that a crash interrupted, as the next
// Apply would: before its plan was committed, every file is restored and
// every staged file removed; after, the cleanup is finished. It reports
// whether there was anything to recover. ctx is checked before it starts.
func Recover(ctx context.Context, ws workspace.Paths) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("proposal: recover: %w", err)
	}
	st, err := recoverJournal(osFS{vfs.OS}, journalPath(ws), ws.ProjectRoot)
	return st != "", err
}

func writeJournal(fsys vfs.FS, name string, j *journal, state string, durable bool) error {
	j.State = state
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if err := vfs.WriteFileAtomic(fsys, name, b, 0o600, durable); err != nil {
		return fmt.Errorf("proposal: write apply journal: %w", err)
	}
	return nil
}

func exists(fsys vfs.FS, name string) bool {
	var err error
	if l, ok := fsys.(linkFS); ok {
		_, err = l.Lstat(name)
	} else {
		_, err = fsys.Stat(name)
	}
	return err == nil
}

// commit stages ops beside their targets and renames them into place under
// the journal at jpath.
func (a *applier) commit(jpath, id string, ops []*op) (err error) {
	fsys, durable := a.fs, a.opts.Durable
	tok := randomToken()
	j := &journal{Schema: JournalSchema, Version: 1, ProjectRoot: a.root, ProposalID: id}
	dirs := map[string]bool{}
	for i, o := range ops {
		t := a.host(o.path)
		d := filepath.Dir(t)
		jo := journalOp{Target: t}
		base := fmt.Sprintf(".paddock-%s-%d", tok, i)
		if !o.remove {
			jo.Stage = filepath.Join(d, base+".new")
		}
		if o.old.exists {
			jo.Backup = filepath.Join(d, base+".old")
		}
		j.Ops = append(j.Ops, jo)
		dirs[d] = true
		// Directories to create, parents first.
		var missing []string
		if !o.old.exists {
			for p := parentOf(o.path); p != "" && a.missingDirs[p]; p = parentOf(p) {
				missing = append(missing, a.host(p))
			}
		}
		for k := len(missing) - 1; k >= 0; k-- {
			if !a.newDirs[missing[k]] {
				a.newDirs[missing[k]] = true
				j.Dirs = append(j.Dirs, missing[k])
			}
		}
	}
	if err := fsys.MkdirAll(filepath.Dir(jpath), 0o755); err != nil {
		return fmt.Errorf("proposal: %w", err)
	}
	// From here on, any failure is rolled back through the journal (a
	// journal whose write failed may exist all the same).
	defer func() {
		if err != nil {
			st, rerr := recoverJournal(fsys, jpath, a.root)
			switch {
			case rerr != nil:
				err = errors.Join(err, fmt.Errorf("proposal: rolling back: %w", rerr))
			case st == stateCommitted:
				// The commit record was written before the failure
				// (say, of the directory sync after it): the apply
				// is complete, and recovery has made it durable.
				err = nil
			}
		}
	}()
	if err := writeJournal(fsys, jpath, j, stateStaging, durable); err != nil {
		return err
	}
	for _, d := range j.Dirs {
		if err := fsys.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("proposal: %w", err)
		}
		dirs[filepath.Dir(d)] = true
	}
	if err := a.each(context.Background(), len(ops), func(i int) error {
		if o := ops[i]; !o.remove {
			if err := writeStage(fsys, j.Ops[i].Stage, o, durable); err != nil {
				return fmt.Errorf("proposal: stage %s: %w", o.path, err)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	syncDirs := func() error {
		if !durable {
			return nil
		}
		ds := make([]string, 0, len(dirs))
		for d := range dirs {
			ds = append(ds, d)
		}
		sort.Strings(ds)
		for _, d := range ds {
			if err := fsys.SyncDir(d); err != nil {
				return fmt.Errorf("proposal: %w", err)
			}
		}
		return nil
	}
	if err := syncDirs(); err != nil {
		return err
	}
	if err := writeJournal(fsys, jpath, j, statePrepared, durable); err != nil {
		return err
	}
	for _, jo := range j.Ops {
		if jo.Backup != "" {
			if err := fsys.Rename(jo.Target, jo.Backup); err != nil {
				return fmt.Errorf("proposal: %w", err)
			}
		}
		if jo.Stage != "" {
			if err := fsys.Rename(jo.Stage, jo.Target); err != nil {
				return fmt.Errorf("proposal: %w", err)
			}
		}
	}
	if err := syncDirs(); err != nil {
		return err
	}
	if err := writeJournal(fsys, jpath, j, stateCommitted, durable); err != nil {
		return err
	}
	// Committed: a failure of the cleanup is finished by the next
	// Recover, not rolled back.
	_ = finish(fsys, jpath, j, durable)
	return nil
}

func writeStage(fsys vfs.FS, name string, o *op, durable bool) error {
	if o.mode == modeSymlink {
		return fsys.(linkFS).Symlink(string(o.data), name)
	}
	f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, o.perm)
	if err != nil {
		return err
	}
	_, err = f.Write(o.data)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// recoverJournal rolls back or forward the apply described by the journal
// at jpath, if there is one.
// It returns the state it recovered from ("" when there was no journal).
func recoverJournal(fsys vfs.FS, jpath, root string) (string, error) {
	b, err := vfs.ReadFile(fsys, jpath)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("proposal: %w", err)
	}
	var j journal
	if err := json.Unmarshal(b, &j); err != nil || j.Schema != JournalSchema {
		return "", fmt.Errorf("%w: %s does not parse (%v); check the project by hand, then remove it", ErrJournal, jpath, err)
	}
	if err := j.validate(root); err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrJournal, jpath, err)
	}
	dirs := map[string]bool{}
	for _, o := range j.Ops {
		dirs[filepath.Dir(o.Target)] = true
	}
	switch j.State {
	case stateStaging, statePrepared:
		for i := len(j.Ops) - 1; i >= 0; i-- {
			o := j.Ops[i]
			if j.State == statePrepared {
				if o.Backup != "" {
					if exists(fsys, o.Backup) {
						if err := fsys.Rename(o.Backup, o.Target); err != nil {
							return "", fmt.Errorf("proposal: recover: %w", err)
						}
					}
				} else if o.Stage != "" && !exists(fsys, o.Stage) && exists(fsys, o.Target) {
					// The staged file was renamed into a new target.
					if err := fsys.Remove(o.Target); err != nil {
						return "", fmt.Errorf("proposal: recover: %w", err)
					}
				}
			}
			if o.Stage != "" && exists(fsys, o.Stage) {
				if err := fsys.Remove(o.Stage); err != nil {
					return "", fmt.Errorf("proposal: recover: %w", err)
				}
			}
		}
		for i := len(j.Dirs) - 1; i >= 0; i-- {
			if fsys.Remove(j.Dirs[i]) == nil {
				dirs[filepath.Dir(j.Dirs[i])] = true
			}
		}
		for d := range dirs {
			if exists(fsys, d) {
				if err := fsys.SyncDir(d); err != nil {
					return "", fmt.Errorf("proposal: recover: %w", err)
				}
			}
		}
		if err := fsys.Remove(jpath); err != nil {
			return "", fmt.Errorf("proposal: recover: %w", err)
		}
		if err := fsys.SyncDir(filepath.Dir(jpath)); err != nil {
			return "", fmt.Errorf("proposal: recover: %w", err)
		}
		return j.State, nil
	case stateCommitted:
		if err := finish(fsys, jpath, &j, true); err != nil {
			return "", fmt.Errorf("proposal: recover: %w", err)
		}
		return j.State, nil
	}
	return "", fmt.Errorf("%w: %s: unknown state %q", ErrJournal, jpath, j.State)
}

// finish removes the backups of a committed apply, the directories its
// deletions emptied, and the journal.
func finish(fsys vfs.FS, jpath string, j *journal, durable bool) error {
	dirs := map[string]bool{}
	for _, o := range j.Ops {
		// Every staged file was renamed before the commit record was
		// written; only backups are left.
		if o.Backup != "" {
			if err := fsys.Remove(o.Backup); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		dirs[filepath.Dir(o.Target)] = true
		if o.Stage == "" {
			// A deletion: remove the directories it emptied, like git.
			for d := filepath.Dir(o.Target); len(d) > len(j.ProjectRoot) && strings.HasPrefix(d, j.ProjectRoot+string(filepath.Separator)); d = filepath.Dir(d) {
				if err := fsys.Remove(d); errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) || errors.Is(err, fs.ErrNotExist) {
					break
				} else if err != nil {
					return err
				}
				dirs[filepath.Dir(d)] = true
			}
		}
	}
	if durable {
		for d := range dirs {
			if exists(fsys, d) {
				if err := fsys.SyncDir(d); err != nil {
					return err
				}
			}
		}
	}
	if err := fsys.Remove(jpath); err != nil {
		return err
	}
	if durable {
		return fsys.SyncDir(filepath.Dir(jpath))
	}
	return nil
}

// validate checks that every path of the journal is in root and that staged
// and backup files sit beside their targets with paddock's names.
func (j *journal) validate(root string) error {
	if filepath.Clean(j.ProjectRoot) != filepath.Clean(root) {
		return fmt.Errorf("journal is for project %s, not %s", j.ProjectRoot, root)
	}
	in := func(p string) bool {
		return p == filepath.Clean(p) && strings.HasPrefix(p, j.ProjectRoot+string(filepath.Separator))
	}
	for _, o := range j.Ops {
		if !in(o.Target) {
			return fmt.Errorf("target %s is outside the project", o.Target)
		}
		for _, p := range []string{o.Stage, o.Backup} {
			if p != "" && (filepath.Dir(p) != filepath.Dir(o.Target) || !strings.HasPrefix(filepath.Base(p), ".paddock-")) {
				return fmt.Errorf("%s is not a staged file beside %s", p, o.Target)
			}
		}
	}
	for _, d := range j.Dirs {
		if !in(d) {
			return fmt.Errorf("directory %s is outside the project", d)
		}
	}
	return nil
}
