// Command recovery shows what the workspace store does when the process
// running a turn is killed. It creates a state root in a temporary
// directory, commits two turns, then starts a copy of itself that begins a
// third turn, writes a step and is killed with SIGKILL while it holds the
// instance. The parent reopens the instance, shows what recovery found
// (the committed messages and the pending turn), resumes the pending turn,
// commits it, and shows the final messages. It needs no network and
// removes its temporary directory.
//
//	go run ./examples/recovery
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/paddockdev/paddock/workspace"
)

// childEnv selects the child role: it holds the temporary directory the
// parent made.
const childEnv = "PADDOCK_RECOVERY_CHILD"

const key = "user:alice"

func main() {
	if dir := os.Getenv(childEnv); dir != "" {
		if err := child(dir, os.Stdout); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// openStore opens the demo's store under dir, in the parent and the child
// alike.
func openStore(dir string) (*workspace.Store, error) {
	paths, err := workspace.NewPaths(filepath.Join(dir, "project"), &workspace.PathsOptions{
		StateRoot:     filepath.Join(dir, "state"),
		WorkspaceName: "recovery-demo",
	})
	if err != nil {
		return nil, err
	}
	return workspace.NewStore(paths, nil)
}

func run(w io.Writer) error {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "paddock-recovery-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Join(tmp, "project"), 0o755); err != nil {
		return err
	}
	store, err := openStore(tmp)
	if err != nil {
		return err
	}

	// 1. Two turns, committed.
	inst, err := store.Open(ctx, key, &workspace.OpenOptions{AgentName: "coder"})
	if err != nil {
		return err
	}
	for _, tr := range [][]workspace.Message{
		{message("m1", "user", "Fix the failing test in parser.go"), message("m2", "assistant", "Done: the off-by-one in Next is fixed.")},
		{message("m3", "user", "Now run the linter"), message("m4", "assistant", "The linter is clean.")},
	} {
		if err := commitTurn(ctx, inst, tr); err != nil {
			return err
		}
	}
	if err := inst.Close(); err != nil {
		return err
	}
	fmt.Fprintln(w, "parent: committed 2 turns (m1-m4)")

	// 2. A child process begins the third turn and is killed in it.
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+tmp)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe() // the child blocks reading it
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && lines.Text() != "ready" {
		fmt.Fprintf(w, "child: %s\n", lines.Text())
	}
	if lines.Text() != "ready" {
		return fmt.Errorf("the child ended before it was ready: %v", lines.Err())
	}
	if held, err := store.Open(ctx, key, nil); err == nil {
		held.Close()
		return errors.New("opened the instance while the child held it")
	} else if !errors.Is(err, workspace.ErrLocked) {
		return err
	}
	fmt.Fprintln(w, "parent: Open fails with ErrLocked while the child holds the instance")
	if err := cmd.Process.Kill(); err != nil {
		return err
	}
	io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	stdin.Close()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != -1 {
		return fmt.Errorf("the child was not killed: %v", err)
	}
	fmt.Fprintln(w, "parent: killed the child mid-turn (SIGKILL)")

	// 3. Reopen: recovery reports the crash and the pending turn.
	inst, err = store.Open(ctx, key, nil)
	if err != nil {
		return err
	}
	defer inst.Close()
	rec := inst.Recovery()
	fmt.Fprintf(w, "reopened: crashed=%v, status=%s, torn tails repaired=%d\n", rec.Crashed, inst.Metadata().Status, len(rec.Repairs))
	fmt.Fprintln(w, "committed messages:")
	if err := printMessages(w, inst.Messages()); err != nil {
		return err
	}
	if rec.Pending == nil {
		return errors.New("no pending turn after the crash")
	}
	fmt.Fprintf(w, "pending turn, %d events:\n", len(rec.Pending.Events))
	for _, e := range rec.Pending.Events {
		if err := printMessage(w, "  "+string(e.Type)+" ", *e.Message); err != nil {
			return err
		}
	}

	// 4. Resume the pending turn, finish it and commit.
	turn, err := inst.ResumeTurn(ctx)
	if err != nil {
		return err
	}
	if err := turn.Append(ctx, workspace.Append(message("m7", "assistant", "All 41 tests pass."))); err != nil {
		return err
	}
	if err := turn.EndStep(ctx); err != nil {
		return err
	}
	if err := turn.Commit(ctx); err != nil {
		return err
	}
	fmt.Fprintln(w, "resumed the pending turn, appended m7, committed")
	fmt.Fprintln(w, "final messages:")
	if err := printMessages(w, inst.Messages()); err != nil {
		return err
	}
	return inst.Close()
}

// child begins the third turn, writes one step, says "ready" and waits to
// be killed. If its stdin closes first (the parent died), it exits without
// committing.
func child(dir string, w io.Writer) error {
	ctx := context.Background()
	store, err := openStore(dir)
	if err != nil {
		return err
	}
	inst, err := store.Open(ctx, key, nil)
	if err != nil {
		return err
	}
	turn, err := inst.BeginTurn(ctx)
	if err != nil {
		return err
	}
	err = turn.Append(ctx,
		workspace.Append(message("m5", "user", "Run the tests")),
		workspace.Append(message("m6", "assistant", "Running go test ./...")),
	)
	if err != nil {
		return err
	}
	if err := turn.EndStep(ctx); err != nil {
		return err
	}
	fmt.Fprintln(w, "began turn 3, appended m5 and m6, ended the step")
	fmt.Fprintln(w, "ready")
	io.Copy(io.Discard, os.Stdin)
	return errors.New("child: stdin closed before the parent killed it")
}

func commitTurn(ctx context.Context, inst *workspace.Instance, msgs []workspace.Message) error {
	t, err := inst.BeginTurn(ctx)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := t.Append(ctx, workspace.Append(m)); err != nil {
			return err
		}
	}
	if err := t.EndStep(ctx); err != nil {
		return err
	}
	return t.Commit(ctx)
}

func message(id, role, content string) workspace.Message {
	data, _ := json.Marshal(map[string]string{"role": role, "content": content})
	return workspace.Message{ID: id, Data: data, CreatedAt: time.Now().UTC(), Source: workspace.Source{Type: role}}
}

func printMessages(w io.Writer, msgs []workspace.Message) error {
	for _, m := range msgs {
		if err := printMessage(w, "  ", m); err != nil {
			return err
		}
	}
	return nil
}

func printMessage(w io.Writer, prefix string, m workspace.Message) error {
	var data struct{ Role, Content string }
	if err := json.Unmarshal(m.Data, &data); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s%s %-10s %s\n", prefix, m.ID, data.Role+":", data.Content)
	return err
}
