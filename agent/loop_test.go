package agent_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockdev/paddock/agent"
	"github.com/paddockdev/paddock/approval"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/sandbox/dirsandbox"
	"github.com/paddockdev/paddock/workspace"
)

// loopRules make rm ask for a human and allow writes in the work
// directory; the rest is left to the analyzers.
const loopRules = "ask execute_bash: rm\nallow write_file: path **\n"

// loopEnv is one loop's world: a workspace instance, a sandbox and a hook.
type loopEnv struct {
	paths workspace.Paths
	store *workspace.Store
	inst  *workspace.Instance
	hook  *approval.Hook
	work  string
}

// openLoopEnv opens the instance "worker" of the workspace at paths, with
// an approval hook whose pending records live in the workspace's state root.
func openLoopEnv(t testing.TB, paths workspace.Paths, work string) *loopEnv {
	t.Helper()
	ctx := context.Background()
	store, err := workspace.NewStore(paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := store.Open(ctx, "worker", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	fs, err := approval.OpenFileStore(paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := approval.NewEvaluator(&approval.Options{Root: work})
	if err := ev.Load(approval.LayerProject, "test.rules", []byte(loopRules)); err != nil {
		t.Fatal(err)
	}
	hook := approval.NewHook(ev, &approval.HookOptions{Store: fs, Session: "s1"})
	return &loopEnv{paths: paths, store: store, inst: inst, hook: hook, work: work}
}

func (e *loopEnv) loop(model agent.Model, sb *sandbox.Sandbox) (*agent.Loop, error) {
	tools, err := agent.StandardTools(sb, nil)
	if err != nil {
		return nil, err
	}
	return &agent.Loop{Model: model, Tools: tools, Instance: e.inst, Hook: e.hook, Cwd: e.work, System: "You are a test agent."}, nil
}

func newPaths(t testing.TB) workspace.Paths {
	t.Helper()
	p, err := workspace.NewPaths(t.TempDir(), &workspace.PathsOptions{StateRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func toolUse(t testing.TB, id, name string, input any) agent.Block {
	t.Helper()
	b, err := agent.ToolUse(id, name, input)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func answer(blocks ...agent.Block) agent.Response {
	stop := agent.EndTurn
	for _, b := range blocks {
		if b.Type == agent.ToolUseBlock {
			stop = agent.ToolUseStop
		}
	}
	return agent.Response{Content: blocks, StopReason: stop}
}

// roles lists the instance's committed messages as role:block-types.
func roles(t *testing.T, inst *workspace.Instance) []string {
	t.Helper()
	var out []string
	for _, m := range inst.Messages() {
		var msg agent.Message
		if err := json.Unmarshal(m.Data, &msg); err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, b := range msg.Content {
			kinds = append(kinds, string(b.Type))
		}
		out = append(out, string(msg.Role)+":"+strings.Join(kinds, ","))
	}
	return out
}

func TestLoopEndToEnd(t *testing.T) {
	forEachBackend(t, func(t *testing.T, sb *sandbox.Sandbox, dir string) {
		env := openLoopEnv(t, newPaths(t), dir)
		isErr := false
		model := agent.NewScriptedModel(
			agent.Step{
				Expect:   agent.Expect{Tools: []string{"execute_bash", "write_file"}, SystemContains: "test agent", LastText: "greet"},
				Response: answer(agent.Text("Writing it."), toolUse(t, "c1", "write_file", map[string]string{"path": "hello.txt", "content": "hi there\n"}), toolUse(t, "c2", "execute_bash", map[string]string{"command": "cat hello.txt && wc -c < hello.txt"})),
			},
			agent.Step{
				Expect:   agent.Expect{ToolResult: "hi there", ToolError: &isErr},
				Response: answer(agent.Text("Done: hello.txt says hi.")),
			},
		)
		var events []string
		l, err := env.loop(model, sb)
		if err != nil {
			t.Fatal(err)
		}
		l.Observe = func(ev agent.LoopEvent) { events = append(events, string(ev.Kind)) }
		res, err := l.Run(context.Background(), "Please greet.")
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != agent.StatusDone || res.Text != "Done: hello.txt says hi." || res.Steps != 2 {
			t.Errorf("result %+v", res)
		}
		if got := readFile(t, filepath.Join(dir, "hello.txt")); got != "hi there\n" {
			t.Errorf("hello.txt = %q", got)
		}
		want := []string{"user:text", "assistant:text,tool_use,tool_use", "user:tool_result,tool_result", "assistant:text"}
		if got := roles(t, env.inst); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("committed messages %v, want %v", got, want)
		}
		if strings.Join(events, " ") != "user assistant decision decision tool tool assistant end" {
			t.Errorf("events %v", events)
		}
		if model.Remaining() != 0 {
			t.Errorf("%d scripted steps left", model.Remaining())
		}
		// The runtime log has the turn, its steps and its tools.
		rt, err := os.ReadFile(filepath.Join(env.inst.Dir(), "messages", "runtime-events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, line := range strings.Split(strings.TrimSpace(string(rt)), "\n") {
			var rec struct {
				R struct {
					Event *struct {
						Type string `json:"type"`
					} `json:"event"`
				} `json:"r"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("runtime event %q: %v", line, err)
			}
			if rec.R.Event != nil {
				types = append(types, rec.R.Event.Type)
			}
		}
		if got := strings.Join(types, " "); !strings.Contains(got, "turn.started step.completed tool.called tool.completed tool.called tool.completed step.completed turn.completed") {
			t.Errorf("runtime events: %s", got)
		}
		// The next turn sees the history.
		model2 := agent.NewScriptedModel(agent.Step{
			Expect: agent.Expect{Check: func(r *agent.Request) error {
				if len(r.Messages) != 5 {
					return fmt.Errorf("%d messages in the second turn, want 5", len(r.Messages))
				}
				return nil
			}},
			Response: answer(agent.Text("ok")),
		})
		l.Model = model2
		if res, err := l.Run(context.Background(), "And now?"); err != nil || res.Status != agent.StatusDone {
			t.Fatalf("second turn: %+v, %v", res, err)
		}
	})
}

func TestLoopRejectAndRespond(t *testing.T) {
	sb, dir := newDir(t, sandbox.Spec{})
	writeFile(t, filepath.Join(dir, "junk"), "x")
	env := openLoopEnv(t, newPaths(t), dir)
	yes := true
	model := agent.NewScriptedModel(
		agent.Step{Response: answer(toolUse(t, "c1", "execute_bash", map[string]string{"command": "rm junk"}))},
		agent.Step{
			Expect:   agent.Expect{ToolResult: "keep that file", ToolError: &yes},
			Response: answer(toolUse(t, "c2", "execute_bash", map[string]string{"command": "ls; rm -f junk"})),
		},
		agent.Step{
			Expect:   agent.Expect{ToolResult: "use the trash instead"},
			Response: answer(agent.Text("Understood.")),
		},
	)
	l, err := env.loop(model, sb)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := l.Run(ctx, "clean up")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.StatusPaused || len(res.Pending) != 1 || res.Pending[0].CallID != "c1" {
		t.Fatalf("first answer: %+v", res)
	}
	if _, err := l.Run(ctx, "another"); !errors.Is(err, agent.ErrTurnPaused) {
		t.Errorf("Run while paused: %v, want ErrTurnPaused", err)
	}
	if _, err := l.Resume(ctx, nil); !errors.Is(err, agent.ErrMissingDecision) {
		t.Errorf("Resume without decisions: %v, want ErrMissingDecision", err)
	}
	res, err = l.Resume(ctx, map[string]approval.Response{res.Pending[0].ID: {Kind: approval.Reject, Message: "keep that file", By: "tester"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.StatusPaused || len(res.Pending) != 1 || res.Pending[0].CallID != "c2" {
		t.Fatalf("after the rejection: %+v", res)
	}
	res, err = l.Resume(ctx, map[string]approval.Response{res.Pending[0].ID: {Kind: approval.Respond, Message: "use the trash instead", By: "tester"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.StatusDone {
		t.Fatalf("final: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "junk")); err != nil {
		t.Errorf("junk was removed although both calls were refused: %v", err)
	}
}

func TestLoopAbort(t *testing.T) {
	sb, dir := newDir(t, sandbox.Spec{})
	env := openLoopEnv(t, newPaths(t), dir)
	model := agent.NewScriptedModel(agent.Step{Response: answer(
		toolUse(t, "c1", "execute_bash", map[string]string{"command": "rm -rf build"}),
		toolUse(t, "c2", "read_file", map[string]string{"path": "x"}),
	)})
	l, err := env.loop(model, sb)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := l.Run(ctx, "go")
	if err != nil || res.Status != agent.StatusPaused {
		t.Fatalf("%+v %v", res, err)
	}
	res, err = l.Resume(ctx, map[string]approval.Response{res.Pending[0].ID: {Kind: approval.Abort, By: "tester"}})
	if err != nil || res.Status != agent.StatusAborted {
		t.Fatalf("%+v %v", res, err)
	}
	want := []string{"user:text", "assistant:tool_use,tool_use", "user:tool_result,tool_result"}
	if got := roles(t, env.inst); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("committed messages %v, want %v: every call must be answered", got, want)
	}
}

// Crash-and-resume: a child process runs the loop until it pauses at an
// approval and is killed there; a new process resumes the same turn.
const (
	loopChildEnv = "PADDOCK_TEST_LOOP_CHILD"
	loopStateEnv = "PADDOCK_TEST_LOOP_STATE"
	loopProjEnv  = "PADDOCK_TEST_LOOP_PROJECT"
	loopWorkEnv  = "PADDOCK_TEST_LOOP_WORK"
)

// crashModel is the script of the crash test, from step from on (the
// child takes the first two steps, the parent the last).
func crashModel(t testing.TB, from int) *agent.ScriptedModel {
	steps := []agent.Step{
		{Response: answer(agent.Text("First a file."), toolUse(t, "c1", "write_file", map[string]string{"path": "a.txt", "content": "A\n"}))},
		{Response: answer(toolUse(t, "c2", "execute_bash", map[string]string{"command": "rm -f old.txt && cat a.txt"}))},
		{Expect: agent.Expect{ToolResult: "A"}, Response: answer(agent.Text("All done."))},
	}
	return agent.NewScriptedModel(steps[from:]...)
}

func TestLoopHelperProcess(t *testing.T) {
	if os.Getenv(loopChildEnv) != "1" {
		t.Skip("helper process for TestLoopCrashResume")
	}
	paths, err := workspace.NewPaths(os.Getenv(loopProjEnv), &workspace.PathsOptions{StateRoot: os.Getenv(loopStateEnv)})
	if err != nil {
		t.Fatal(err)
	}
	work := os.Getenv(loopWorkEnv)
	sb := dirSandbox(t, work)
	env := openLoopEnv(t, paths, work)
	l, err := env.loop(crashModel(t, 0), sb)
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.Run(context.Background(), "make a.txt")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("STATUS %s %d\n", res.Status, len(res.Pending))
	time.Sleep(time.Minute) // the parent kills us here
}

func dirSandbox(t testing.TB, work string) *sandbox.Sandbox {
	t.Helper()
	drv, err := dirsandbox.New(work, sandbox.Spec{Network: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sandbox.New(drv, nil)
}

func TestLoopCrashResume(t *testing.T) {
	paths := newPaths(t)
	work := t.TempDir()
	writeFile(t, filepath.Join(work, "old.txt"), "old")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoopHelperProcess$", "-test.v")
	cmd.Env = append(os.Environ(), loopChildEnv+"=1", loopStateEnv+"="+paths.StateRoot, loopProjEnv+"="+paths.ProjectRoot, loopWorkEnv+"="+work)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	status := ""
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "STATUS "); ok {
			status = s
			break
		}
	}
	if status != "paused 1" {
		cmd.Process.Kill()
		t.Fatalf("child status %q, want paused 1", status)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	// A new process (this one): the instance recovers the open turn.
	env := openLoopEnv(t, paths, work)
	if p := env.inst.Recovery().Pending; p == nil {
		t.Fatal("the paused turn was not recovered")
	}
	l, err := env.loop(crashModel(t, 2), dirSandbox(t, work))
	if err != nil {
		t.Fatal(err)
	}
	pend, err := l.Paused()
	if err != nil || len(pend) != 1 || pend[0].CallID != "c2" {
		t.Fatalf("Paused after the restart: %+v, %v", pend, err)
	}
	res, err := l.Resume(context.Background(), map[string]approval.Response{pend[0].ID: {Kind: approval.Approve, By: "tester"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.StatusDone || res.Text != "All done." {
		t.Fatalf("after the restart: %+v", res)
	}
	want := []string{"user:text", "assistant:text,tool_use", "user:tool_result", "assistant:tool_use", "user:tool_result", "assistant:text"}
	if got := roles(t, env.inst); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("committed messages %v, want %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(work, "old.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the approved rm did not run: %v", err)
	}
}
