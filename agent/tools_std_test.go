package agent_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockdev/paddock/agent"
	"github.com/paddockdev/paddock/sandbox"
)

func TestStandardToolsNames(t *testing.T) {
	sb, _ := newDir(t, sandbox.Spec{})
	for _, tc := range []struct {
		opts *agent.ToolOptions
		want string
	}{
		{nil, "execute_bash read_file write_file edit_file list_files"},
		{&agent.ToolOptions{AllowDomains: []string{"example.com"}}, "execute_bash read_file write_file edit_file list_files"},
		{&agent.ToolOptions{Network: true}, "execute_bash read_file write_file edit_file list_files"},
		{&agent.ToolOptions{Network: true, AllowDomains: []string{"example.com"}}, "execute_bash read_file write_file edit_file list_files http_request"},
		{&agent.ToolOptions{Searcher: fakeSearcher{}}, "execute_bash read_file write_file edit_file list_files web_search"},
	} {
		set, err := agent.StandardTools(sb, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(set.Names(), " "); got != tc.want {
			t.Errorf("StandardTools(%+v) = %s, want %s", tc.opts, got, tc.want)
		}
	}
}

func TestExecuteBash(t *testing.T) {
	forEachBackend(t, func(t *testing.T, sb *sandbox.Sandbox, dir string) {
		var checked atomic.Int32
		var dirs sync.Map
		guard := agent.CommandGuardFunc(func(ctx context.Context, command, dir string) error {
			checked.Add(1)
			dirs.Store(command, dir)
			if strings.Contains(command, "rm -rf") {
				return errors.New("rm -rf is not allowed here; delete files one by one")
			}
			if strings.Contains(command, "classify") {
				return errors.New("the safety classifier is unavailable")
			}
			return nil
		})
		set, err := agent.StandardTools(sb, &agent.ToolOptions{Guard: guard, MaxOutput: 1000})
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "sub", "keep.txt"), "keep")
		for _, tc := range []struct {
			name    string
			input   map[string]any
			isError bool
			want    []string
		}{
			{"ok", map[string]any{"command": "echo out; echo err >&2"}, false, []string{"exit status 0", "stdout:\nout\n", "stderr:\nerr\n"}},
			{"fails", map[string]any{"command": "exit 3"}, true, []string{"exit status 3"}},
			{"cwd", map[string]any{"command": "cat keep.txt", "cwd": "sub"}, false, []string{"stdout:\nkeep"}},
			{"writes in the work dir", map[string]any{"command": "echo made > made.txt && pwd"}, false, []string{"exit status 0"}},
			{"timeout", map[string]any{"command": "sleep 30", "timeout_seconds": 1}, true, []string{"killed: timed out after 1s"}},
			{"output cap", map[string]any{"command": "seq 1 100000"}, false, []string{"output truncated", "\n1\n", "\n100000\n"}},
			{"guard refuses", map[string]any{"command": "rm -rf sub"}, true, []string{"command refused: rm -rf is not allowed here; delete files one by one"}},
			{"guard fails closed", map[string]any{"command": "classify me"}, true, []string{"command refused: the safety classifier is unavailable"}},
			{"cwd escape", map[string]any{"command": "ls", "cwd": "../.."}, true, []string{`cwd "../.." leaves the sandbox`}},
			{"cwd missing", map[string]any{"command": "ls", "cwd": "nope"}, true, []string{`cwd "nope" does not exist`}},
			{"no command", map[string]any{}, true, []string{"command: is required"}},
			{"timeout over the cap", map[string]any{"command": "true", "timeout_seconds": 100000}, true, []string{"timeout_seconds: must be at most 600"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				start := time.Now()
				res := call(t, set, "execute_bash", tc.input)
				if res.IsError != tc.isError {
					t.Errorf("IsError = %v, want %v:\n%s", res.IsError, tc.isError, res.Content)
				}
				for _, w := range tc.want {
					if !strings.Contains(res.Content, w) {
						t.Errorf("result does not contain %q:\n%.2000s", w, res.Content)
					}
				}
				if time.Since(start) > 15*time.Second {
					t.Errorf("took %v", time.Since(start))
				}
			})
		}
		if _, err := os.Stat(filepath.Join(dir, "sub", "keep.txt")); err != nil {
			t.Errorf("the refused rm ran: %v", err)
		}
		if got := readFile(t, filepath.Join(dir, "made.txt")); got != "made\n" {
			t.Errorf("made.txt = %q", got)
		}
		if d, _ := dirs.Load("cat keep.txt"); d != "sub" {
			t.Errorf("the guard saw dir %v for the command in sub", d)
		}
		if d, _ := dirs.Load("exit 3"); d != "." {
			t.Errorf("the guard saw dir %v for a command in the work directory", d)
		}
		if checked.Load() < 8 {
			t.Errorf("guard called %d times", checked.Load())
		}
	})
}

func TestExecuteBashCancel(t *testing.T) {
	sb, _ := newDir(t, sandbox.Spec{})
	set, err := agent.StandardTools(sb, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = set.Call(ctx, "execute_bash", js(t, map[string]any{"command": "sleep 30"}))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the context's error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel took %v", d)
	}
}

func TestFileTools(t *testing.T) {
	forEachBackend(t, func(t *testing.T, sb *sandbox.Sandbox, dir string) {
		set, err := agent.StandardTools(sb, &agent.ToolOptions{MaxReadBytes: 100})
		if err != nil {
			t.Fatal(err)
		}
		outside := filepath.Join(t.TempDir(), "secret")
		writeFile(t, outside, "secret")
		if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "big"), strings.Repeat("x", 200))
		writeFile(t, filepath.Join(dir, "lines.txt"), "one\ntwo\nthree\nfour\n")
		writeFile(t, filepath.Join(dir, "dup.txt"), "a a\n")
		for _, tc := range []struct {
			name    string
			tool    string
			input   map[string]any
			isError bool
			want    string
		}{
			{"write new file in new dir", "write_file", map[string]any{"path": "pkg/x/new.go", "content": "package x\n"}, false, "wrote 10 bytes to pkg/x/new.go"},
			{"read it back", "read_file", map[string]any{"path": "pkg/x/new.go"}, false, "package x\n"},
			{"read lines", "read_file", map[string]any{"path": "lines.txt", "start_line": 2, "max_lines": 2}, false, "two\nthree\n"},
			{"read past the end", "read_file", map[string]any{"path": "lines.txt", "start_line": 9}, true, "has 4 lines; start_line 9 is past the end"},
			{"read missing", "read_file", map[string]any{"path": "nope.txt"}, true, `"nope.txt" does not exist`},
			{"read too large", "read_file", map[string]any{"path": "big"}, true, "too large"},
			{"read through a link out", "read_file", map[string]any{"path": "link"}, true, "leaves the sandbox"},
			{"read absolute", "read_file", map[string]any{"path": outside}, true, "leaves the sandbox"},
			{"write dotdot", "write_file", map[string]any{"path": "../evil", "content": "x"}, true, "leaves the sandbox"},
			{"write through a link", "write_file", map[string]any{"path": "link", "content": "pwned"}, true, ""},
			{"edit once", "edit_file", map[string]any{"path": "lines.txt", "old_string": "two\n", "new_string": "2\n"}, false, "edited lines.txt"},
			{"edit not found", "edit_file", map[string]any{"path": "lines.txt", "old_string": "five", "new_string": "5"}, true, "was not found"},
			{"edit ambiguous", "edit_file", map[string]any{"path": "dup.txt", "old_string": "a", "new_string": "b"}, true, "occurs 2 times"},
			{"edit empty old", "edit_file", map[string]any{"path": "dup.txt", "old_string": "", "new_string": "b"}, true, "old_string: must not be empty"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res := call(t, set, tc.tool, tc.input)
				if res.IsError != tc.isError || !strings.Contains(res.Content, tc.want) {
					t.Errorf("= %+v, want IsError %v and %q", res, tc.isError, tc.want)
				}
			})
		}
		if got := readFile(t, filepath.Join(dir, "lines.txt")); got != "one\n2\nthree\nfour\n" {
			t.Errorf("lines.txt = %q", got)
		}
		if got := readFile(t, filepath.Join(dir, "dup.txt")); got != "a a\n" {
			t.Errorf("dup.txt = %q", got)
		}
		if got := readFile(t, outside); got != "secret" {
			t.Errorf("the file outside was changed: %q", got)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "evil")); err == nil {
			t.Error("write_file wrote outside")
		}
		// The command sees what the file tools wrote.
		res := call(t, set, "execute_bash", map[string]any{"command": "cat pkg/x/new.go"})
		if !strings.Contains(res.Content, "package x") {
			t.Errorf("cat: %s", res.Content)
		}
	})
}

type fakeSearcher struct{ err error }

func (f fakeSearcher) Search(ctx context.Context, q string, n int) ([]agent.SearchResult, error) {
	if f.err != nil {
		return nil, f.err
	}
	var out []agent.SearchResult
	for i := range min(n, 3) {
		out = append(out, agent.SearchResult{Title: fmt.Sprintf("%s %d", q, i+1), URL: fmt.Sprintf("https://example.com/%d", i+1), Snippet: "about " + q})
	}
	return out, nil
}

// TestToolsConcurrent runs file tools and commands at once (run with -race).
func TestToolsConcurrent(t *testing.T) {
	sb, dir := newDir(t, sandbox.Spec{})
	set, err := agent.StandardTools(sb, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		wg.Go(func() {
			name := fmt.Sprintf("f%02d.txt", i)
			res, err := set.Call(t.Context(), "write_file", js(t, map[string]any{"path": name, "content": name}))
			if err != nil || res.IsError {
				errs <- fmt.Errorf("write %s: %v %s", name, err, res.Content)
				return
			}
			res, err = set.Call(t.Context(), "execute_bash", js(t, map[string]any{"command": "cat " + name}))
			if err != nil || !strings.Contains(res.Content, name) {
				errs <- fmt.Errorf("cat %s: %v %s", name, err, res.Content)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 20 {
		t.Errorf("%d files, want 20", len(entries))
	}
}
