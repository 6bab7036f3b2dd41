package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/paddockdev/paddock/agent"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/sandbox/dirsandbox"
)

// exampleSandbox returns a directory sandbox over a new temporary directory.
func exampleSandbox() (*sandbox.Sandbox, string, func()) {
	dir, err := os.MkdirTemp("", "agent-example-")
	if err != nil {
		log.Fatal(err)
	}
	drv, err := dirsandbox.New(dir, sandbox.Spec{Network: true}, nil)
	if err != nil {
		log.Fatal(err)
	}
	sb := sandbox.New(drv, nil)
	return sb, dir, func() { sb.Close(context.Background()); os.RemoveAll(dir) }
}

func ExampleNewProfile() {
	w, err := agent.NewProfile("coder-1", agent.Worker, nil)
	if err != nil {
		log.Fatal(err)
	}
	o, err := agent.NewProfile("lead", agent.Orchestrator, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(w.ID, w.Runtime.CwdMode)
	fmt.Println(o.ID, o.Runtime.CwdMode)
	// Output:
	// coder-1 agentHome
	// lead workspace
}

func ExampleResolveCwd() {
	box := "/state/workspaces/ws/sandboxes/run1/coder-1"
	w, err := agent.WorkerProfile("coder-1", box, box+"/work", nil)
	if err != nil {
		log.Fatal(err)
	}
	cwd, err := agent.ResolveCwd(w, "/home/me/project")
	fmt.Println(cwd, err)

	// A worker without a home is an error, never the project root.
	w.HomeDir = ""
	_, err = agent.ResolveCwd(w, "/home/me/project")
	fmt.Println(errors.Is(err, agent.ErrNoHome))

	lead, _ := agent.NewProfile("lead", agent.Orchestrator, nil)
	cwd, _ = agent.ResolveCwd(lead, "/home/me/project")
	fmt.Println(cwd)
	// Output:
	// /state/workspaces/ws/sandboxes/run1/coder-1/work <nil>
	// true
	// /home/me/project
}

func ExampleCodeReviewer() {
	p, err := agent.CodeReviewer("reviewer", &agent.ProfileOptions{HomeDir: "/s/work", SandboxDir: "/s"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Role, p.Tools)
	// Output:
	// worker [read_file list_files web_search]
}

func ExampleSchema_Validate() {
	s := agent.Object(map[string]*agent.Schema{
		"path":  agent.String("file path", true),
		"lines": agent.Integer("how many", 1, 100),
	}, "path")
	fmt.Println(s.Validate(json.RawMessage(`{"path":"a.go","lines":5}`)))
	fmt.Println(s.Validate(json.RawMessage(`{"lines":500,"mode":"x"}`)))
	// Output:
	// <nil>
	// invalid input: lines: must be at most 100 (got 500); mode: is not a known field; the fields are lines, path; path: is required
}

func ExampleSet_Call() {
	greet := agent.NewTool("greet", "Greet someone.",
		agent.Object(map[string]*agent.Schema{"name": agent.String("who", true)}, "name"),
		func(ctx context.Context, input json.RawMessage) (agent.Result, error) {
			var in struct{ Name string }
			if err := json.Unmarshal(input, &in); err != nil {
				return agent.Result{}, err
			}
			return agent.Result{Content: "hello, " + in.Name}, nil
		})
	set, err := agent.NewSet(greet)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for _, input := range []string{`{"name":"Ada"}`, `{"name":""}`} {
		res, err := set.Call(ctx, "greet", json.RawMessage(input))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.IsError, res.Content)
	}
	res, _ := set.Call(ctx, "wave", nil)
	fmt.Println(res.IsError, res.Content)
	// Output:
	// false hello, Ada
	// true invalid input for greet: name: must not be empty
	// true there is no tool named "wave"; the tools are greet
}

func ExampleStandardTools() {
	sb, _, cleanup := exampleSandbox()
	defer cleanup()
	// The guard is where a host plugs in shell safety analysis.
	guard := agent.CommandGuardFunc(func(ctx context.Context, command, dir string) error {
		if strings.Contains(command, "curl") {
			return errors.New("no network tools; the sandbox is offline")
		}
		return nil
	})
	set, err := agent.StandardTools(sb, &agent.ToolOptions{Guard: guard})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(set.Names())
	ctx := context.Background()
	for _, c := range []struct{ tool, input string }{
		{"write_file", `{"path":"src/hello.txt","content":"hello\n"}`},
		{"edit_file", `{"path":"src/hello.txt","old_string":"hello","new_string":"hi"}`},
		{"execute_bash", `{"command":"cat src/hello.txt"}`},
		{"execute_bash", `{"command":"curl example.com"}`},
		{"read_file", `{"path":"../../etc/passwd"}`},
	} {
		res, err := set.Call(ctx, c.tool, json.RawMessage(c.input))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: error=%v %s\n", c.tool, res.IsError, strings.TrimSpace(res.Content))
	}
	// Output:
	// [execute_bash read_file write_file edit_file list_files]
	// write_file: error=false wrote 6 bytes to src/hello.txt
	// edit_file: error=false edited src/hello.txt
	// execute_bash: error=false exit status 0
	// stdout:
	// hi
	// execute_bash: error=true command refused: no network tools; the sandbox is offline
	// read_file: error=true path "../../etc/passwd" leaves the sandbox; use a path relative to the work directory
}

func ExampleSupervisorTools() {
	sb, dir, cleanup := exampleSandbox()
	defer cleanup()
	set, err := agent.SupervisorTools(sb, nil)
	if err != nil {
		log.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "model"), 0o755)
	os.WriteFile(filepath.Join(dir, "model", "train.py"), []byte("v1"), 0o644)
	ctx := context.Background()
	res, err := set.Call(ctx, "edit", json.RawMessage(`{"files":[{"path":"model/train.py","content":"v2"},{"path":"eval/train.py","content":"e1"}]}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content)
	res, err = set.Call(ctx, "list_files", json.RawMessage(`{"path":"model"}`))
	if err != nil {
		log.Fatal(err)
	}
	e, err := agent.ParseEnvelope(res.Content)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(e.Metadata.Action, string(e.Metadata.Stdout))
	// Output:
	// {"command":"edit model/train.py eval/train.py","result":{"changes":[{"file":"model/train.py","bak":"model/train.py.bak"},{"file":"eval/train.py","bak":""}],"message":"edited 2 files"},"metadata":{"stdout":{"changes":[{"file":"model/train.py","bak":"model/train.py.bak"},{"file":"eval/train.py","bak":""}],"message":"edited 2 files"},"stderr":"","action":"edit","dir_path":"."}}
	// list_files [{"name":"train.py","path":"model/train.py","is_dir":false},{"name":"train.py.bak","path":"model/train.py.bak","is_dir":false}]
}

func ExampleHTTPRequest() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "pong")
	}))
	defer srv.Close()
	// Off unless the sandbox's spec allows network.
	_, err := agent.HTTPRequest(&agent.ToolOptions{AllowDomains: []string{"127.0.0.1"}})
	fmt.Println(errors.Is(err, agent.ErrNetworkDisabled))

	tool, err := agent.HTTPRequest(&agent.ToolOptions{Network: true, AllowDomains: []string{"127.0.0.1"}})
	if err != nil {
		log.Fatal(err)
	}
	set, _ := agent.NewSet(tool)
	ctx := context.Background()
	res, _ := set.Call(ctx, "http_request", json.RawMessage(`{"url":"`+srv.URL+`/ping"}`))
	fmt.Println(res.IsError, strings.HasSuffix(res.Content, "\n\npong"))
	res, _ = set.Call(ctx, "http_request", json.RawMessage(`{"url":"https://example.org/"}`))
	fmt.Println(res.IsError, res.Content)
	// Output:
	// true
	// false true
	// true host "example.org" is not in the allowed domains (127.0.0.1)
}

func ExampleWebSearch() {
	set, _ := agent.NewSet(agent.WebSearch(nil))
	res, _ := set.Call(context.Background(), "web_search", json.RawMessage(`{"query":"go 1.26 release notes"}`))
	fmt.Println(res.IsError, res.Content)
	// Output:
	// true web search is not configured on this host; do without it (read the code and docs in the sandbox) or ask the user
}

func ExampleInstructions() {
	sb, _, cleanup := exampleSandbox()
	defer cleanup()
	all, err := agent.StandardTools(sb, nil)
	if err != nil {
		log.Fatal(err)
	}
	p, err := agent.TestGenerator("testgen", &agent.ProfileOptions{HomeDir: "/s/work", SandboxDir: "/s"})
	if err != nil {
		log.Fatal(err)
	}
	tools, err := all.For(p)
	if err != nil {
		log.Fatal(err)
	}
	prompt, err := agent.Instructions(agent.InstructionsConfig{Profile: p, Tools: tools, SandboxKind: "bwrap", Cwd: "/workspace", ApprovalTools: []string{"execute_bash"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(prompt, "\n") {
		if strings.HasPrefix(line, "# ") || strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "Calls to") {
			fmt.Println(strings.SplitN(line, ":", 2)[0])
		}
	}
	// Output:
	// # Environment
	// # Tools
	// - execute_bash
	// - read_file
	// - write_file
	// - edit_file
	// - list_files
	// # Approval
	// Calls to execute_bash wait for approval before they run. A call may be approved, edited, rejected with a reason, or answered with a message instead of running; you will see which in its result. Do not repeat a rejected call unchanged
	// # Style
}

func ExampleScriptedModel() {
	call, err := agent.ToolUse("toolu_1", "execute_bash", map[string]string{"command": "go test ./..."})
	if err != nil {
		log.Fatal(err)
	}
	m := agent.NewScriptedModel(
		agent.Step{Expect: agent.Expect{Tools: []string{"execute_bash"}}, Response: agent.Response{Content: []agent.Block{call}}},
		agent.Step{Expect: agent.Expect{ToolResult: "ok"}, Response: agent.Response{Content: []agent.Block{agent.Text("tests pass")}}},
	)
	ctx := context.Background()
	req := &agent.Request{Messages: []agent.Message{agent.UserText("run the tests")}, Tools: []agent.ToolDef{{Name: "execute_bash"}}}
	resp, err := m.Generate(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.StopReason, resp.Content[0].Name, string(resp.Content[0].Input))
	req.Messages = append(req.Messages, resp.Message(),
		agent.Message{Role: agent.User, Content: []agent.Block{agent.ToolResult("toolu_1", agent.Result{Content: "ok  example.com/p"})}})
	resp, err = m.Generate(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.StopReason, resp.Message().TextContent())
	_, err = m.Generate(ctx, req)
	fmt.Println(errors.Is(err, agent.ErrScriptExhausted))
	// Output:
	// tool_use execute_bash {"command":"go test ./..."}
	// end_turn tests pass
	// true
}
