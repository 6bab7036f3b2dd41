package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/paddockdev/paddock/sandbox"
)

// EditChange is one file the edit action wrote: Bak is its backup, or ""
// for a file it created.
type EditChange struct {
	File string `json:"file"`
	Bak  string `json:"bak"`
}

// maxBackups bounds the search for a free .bak.N name.
const maxBackups = 1000

// Edit returns the edit action: several files written in one call, each
// given by its path relative to the work directory (never matched by base
// name, so a/x.py and b/x.py are different files). An existing file is first
// copied to file.bak, or file.bak.N with the first free N. Its stdout is
// {"message", "changes": [{file, bak}]}.
//
// Every path is checked before anything is written. Each file is replaced
// atomically; when a write fails, the files already written are put back as
// they were (and new files removed), so the call changes all the files or
// none of them. The backups of a failed call are removed too.
func Edit(sb *sandbox.Sandbox) Tool {
	schema := Object(map[string]*Schema{
		"files": {Type: "array", Description: "The files to write.", MinItems: ptr(1), Items: Object(map[string]*Schema{
			"path":    String("File path relative to the work directory.", true),
			"content": String("The whole new content of the file.", false),
		}, "path", "content")},
	}, "files")
	return NewTool(EditName,
		"Write several files in one call, by path, keeping a .bak (or .bak.N) backup of each file that existed.",
		schema, func(ctx context.Context, input json.RawMessage) (Result, error) {
			var in struct {
				Files []struct {
					Path    string `json:"path"`
					Content string `json:"content"`
				} `json:"files"`
			}
			if err := decodeInput(EditName, input, &in); err != nil {
				return Result{}, err
			}
			type plan struct {
				file, bak string
				old       []byte
				perm      fs.FileMode
				existed   bool
				content   []byte
			}
			plans := make([]*plan, 0, len(in.Files))
			seen := map[string]int{}
			taken := map[string]bool{}
			for i, f := range in.Files {
				p := slashClean(f.Path)
				if p == "." || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
					return Result{}, toolErr(EditName, nil, "files[%d].path %q must be a file path relative to the work directory", i, f.Path)
				}
				if j, dup := seen[p]; dup {
					return Result{}, toolErr(EditName, nil, "files[%d] and files[%d] are both %q; give each file once", j, i, p)
				}
				seen[p] = i
				taken[p] = true // a backup must not land on another file of the call
			}
			for i, f := range in.Files {
				p := slashClean(f.Path)
				pl := &plan{file: p, content: []byte(f.Content), perm: 0o644}
				info, err := sb.Stat(ctx, p)
				switch {
				case err == nil:
					if !info.Mode.IsRegular() {
						return Result{}, toolErr(EditName, nil, "files[%d].path %q is not a regular file", i, p)
					}
					pl.existed, pl.perm = true, info.Mode.Perm()
					if pl.old, err = sb.ReadFile(ctx, p, 0); err != nil {
						return Result{}, fileErr(EditName, p, err)
					}
					if pl.bak, err = freeBackup(ctx, sb, p, taken); err != nil {
						return Result{}, err
					}
					taken[pl.bak] = true
				case errors.Is(err, fs.ErrNotExist):
				default:
					return Result{}, fileErr(EditName, p, err)
				}
				plans = append(plans, pl)
			}
			var done []*plan
			var backups []string
			undo := func() error {
				var errs []error
				for _, pl := range done {
					if pl.existed {
						errs = append(errs, sb.WriteFile(context.WithoutCancel(ctx), pl.file, pl.old, pl.perm))
					} else {
						errs = append(errs, sb.Remove(context.WithoutCancel(ctx), pl.file))
					}
				}
				for _, b := range backups {
					errs = append(errs, sb.Remove(context.WithoutCancel(ctx), b))
				}
				return errors.Join(errs...)
			}
			fail := func(pl *plan, err error) (Result, error) {
				if uerr := undo(); uerr != nil {
					return Result{}, fmt.Errorf("agent: edit: writing %s failed (%w) and undoing the other files failed too: %w", pl.file, err, uerr)
				}
				if ctx.Err() != nil {
					return Result{}, ctx.Err()
				}
				return Result{}, fileErr(EditName, pl.file, err)
			}
			for _, pl := range plans {
				if pl.existed {
					if err := sb.WriteFile(ctx, pl.bak, pl.old, pl.perm); err != nil {
						return fail(pl, err)
					}
					backups = append(backups, pl.bak)
				} else if dir := path.Dir(pl.file); dir != "." {
					if err := sb.Mkdir(ctx, dir, 0o755); err != nil {
						return fail(pl, err)
					}
				}
				if err := sb.WriteFile(ctx, pl.file, pl.content, pl.perm); err != nil {
					return fail(pl, err)
				}
				done = append(done, pl)
			}
			changes := make([]EditChange, len(plans))
			files := make([]string, len(plans))
			for i, pl := range plans {
				changes[i] = EditChange{File: pl.file, Bak: pl.bak}
				files[i] = pl.file
			}
			msg := fmt.Sprintf("edited %d files", len(plans))
			if len(plans) == 1 {
				msg = "edited 1 file"
			}
			return envelope(EditName, ".", "edit "+strings.Join(files, " "),
				map[string]any{"message": msg, "changes": changes}, "", false)
		})
}

// freeBackup returns the first of p.bak, p.bak.1, p.bak.2, … that does not
// exist and is not taken by another file of the same call.
func freeBackup(ctx context.Context, sb *sandbox.Sandbox, p string, taken map[string]bool) (string, error) {
	for n := 0; n < maxBackups; n++ {
		name := p + ".bak"
		if n > 0 {
			name = fmt.Sprintf("%s.bak.%d", p, n)
		}
		if taken[name] {
			continue
		}
		_, err := sb.Stat(ctx, name)
		if errors.Is(err, fs.ErrNotExist) {
			return name, nil
		}
		if err != nil {
			return "", fileErr(EditName, name, err)
		}
	}
	return "", toolErr(EditName, nil, "%q already has %d backups; remove old .bak files first", p, maxBackups)
}
