package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// Emit appends ev to runtime-events.jsonl, the instance's observability
// log. It fills in Time (when zero), AgentName and InstanceKey, masks known
// secrets (see [StoreOptions.Masker]), and rotates the file when it would
// pass [StoreOptions.RuntimeEventsMaxBytes]. The log is never synced and
// recovery never reads it: deleting it changes nothing.
func (in *Instance) Emit(ctx context.Context, ev RuntimeEvent) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return ErrClosed
	}
	if ev.Time.IsZero() {
		ev.Time = in.s.opts.Now().UTC()
	}
	if ev.AgentName == "" {
		ev.AgentName = in.md.AgentName
	}
	if ev.InstanceKey == "" {
		ev.InstanceKey = in.key
	}
	if ev.Type == "" {
		return errors.New("workspace: runtime event has no type")
	}
	if in.rtF == nil {
		f, err := in.s.fsys.OpenFile(in.runtimePath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("workspace: runtime events: %w", err)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return fmt.Errorf("workspace: runtime events: %w", err)
		}
		in.rtF, in.rtSize = f, fi.Size()
	}
	line, err := in.s.frameLog(nil, in.rtSize == 0, schemaRuntime, runtimeRecord{Event: &ev})
	if err != nil {
		return fmt.Errorf("workspace: runtime event %s: %w", ev.Type, err)
	}
	if in.rtSize > 0 && in.rtSize+int64(len(line)) > in.s.opts.RuntimeEventsMaxBytes {
		if err := in.rotateRuntime(); err != nil {
			return fmt.Errorf("workspace: rotate runtime events: %w", err)
		}
		// The new file starts with its header.
		line, _ = in.s.frameLog(nil, true, schemaRuntime, runtimeRecord{Event: &ev})
	}
	n, err := in.rtF.Write(line)
	in.rtSize += int64(n)
	if err != nil {
		return fmt.Errorf("workspace: runtime events: %w", err)
	}
	return nil
}

// rotateRuntime shifts runtime-events.jsonl to runtime-events.1.jsonl (and
// .1 to .2, …), dropping the oldest, and starts a new file.
func (in *Instance) rotateRuntime() error {
	fsys := in.s.fsys
	rotated := func(i int) string { return in.path("messages", fmt.Sprintf("runtime-events.%d.jsonl", i)) }
	keep := in.s.opts.RuntimeEventsKeep
	fsys.Remove(rotated(keep))
	for i := keep - 1; i >= 1; i-- {
		if err := fsys.Rename(rotated(i), rotated(i+1)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	in.rtF.Close()
	in.rtF = nil
	if err := fsys.Rename(in.runtimePath(), rotated(1)); err != nil {
		return err
	}
	f, err := fsys.OpenFile(in.runtimePath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	in.rtF, in.rtSize = f, 0
	return nil
}
