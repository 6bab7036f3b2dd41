package approval

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/paddockdev/paddock/safety"
)

func shellCall(cmd string) Call {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return Call{ID: "c1", Tool: "bash", Input: in, Cwd: "/home/dev/proj"}
}

func fileCall(tool, p string) Call {
	in, _ := json.Marshal(map[string]string{"path": p})
	return Call{ID: "c1", Tool: tool, Input: in, Cwd: "/home/dev/proj"}
}

func newEval(t testing.TB, layers map[Layer]string) *Evaluator {
	t.Helper()
	e := NewEvaluator(&Options{Home: "/home/dev"})
	for _, l := range layerOrder {
		if text, ok := layers[l]; ok {
			if err := e.Load(l, string(l)+".rules", []byte(text)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return e
}

func TestRuleMatching(t *testing.T) {
	e := newEval(t, map[Layer]string{LayerProject: `
allow bash: git status|log|diff
allow bash: go test|vet|build
deny bash: rm -r -f
ask bash: git push
allow bash: npm run *
allow read_file: path src/** *.md
deny read_file: path **/secrets/**
allow write_file: path /tmp/out/*
allow fetch: domain pkg.go.dev *.golang.org
deny fetch: domain evil.example
allow list_files
`})
	tests := []struct {
		call Call
		want Effect
	}{
		{shellCall("git status"), Allow},
		{shellCall("git log --oneline -5"), Allow},
		{shellCall("/usr/bin/git diff"), Allow},
		{shellCall("git push origin main"), Ask},
		{shellCall("git commit -m x"), Ask}, // no rule, medium risk
		{shellCall("go test ./..."), Allow},
		{shellCall("rm -rf build"), Deny},
		{shellCall("rm -fr build"), Deny},
		{shellCall("rm -r -f build"), Deny},
		{shellCall("rm -f -r build"), Deny},
		{shellCall("rm --recursive --force build"), Deny},
		{shellCall("rm -Rf build"), Deny},
		{shellCall("rm -rfv build"), Deny},
		{shellCall("rm -r build"), Ask}, // no force: not the deny rule, high risk
		{shellCall("npm run lint"), Allow},
		{shellCall("git -C sub status"), Allow}, // no rule matches; low risk
		{shellCall("git -C sub push"), Ask},
		{shellCall("npm run $X"), Ask}, // a dynamic word never matches an allow rule
		{shellCall("ls -la"), Allow},   // no rule, low risk
		{shellCall("git status && rm -fr x"), Deny},
		{shellCall("git status && git push"), Ask}, // every segment must be allowed
		{shellCall("git status; go vet ./..."), Allow},
		{shellCall("git log | bash"), Ask},               // an allow rule cannot cover the pipe into a shell
		{shellCall("git status; rm -rf ~"), Deny},        // critical
		{shellCall("git status > status.txt"), Ask},      // the rule does not cover the redirection
		{shellCall("git status 2>&1 >/dev/null"), Allow}, // nothing written
		{shellCall("git status > ~/.bashrc"), Deny},      // critical write
		{shellCall("timeout 5 git status"), Allow},       // harmless wrapper looked through
		{shellCall("sudo git status"), Ask},              // privilege is its own segment
		{shellCall("bash -c 'git status'"), Allow},       // nested segments judged
		{shellCall("bash -c 'git status; rm -fr x'"), Deny},
		{fileCall("read_file", "src/a/b.go"), Allow},
		{fileCall("read_file", "README.md"), Allow},
		{fileCall("read_file", "src/secrets/key.txt"), Deny},
		{fileCall("read_file", "../other/x.go"), Allow}, // read-only tool, no rule, not a credential
		{fileCall("read_file", ".env"), Ask},            // credential
		{fileCall("write_file", "main.go"), Ask},
		{fileCall("write_file", "/tmp/out/x"), Allow},
		{fileCall("list_files", "anything"), Allow},
		{Call{Tool: "fetch", Input: json.RawMessage(`{"url":"https://pkg.go.dev/fmt"}`)}, Allow},
		{Call{Tool: "fetch", Input: json.RawMessage(`{"url":"https://go.golang.org/x"}`)}, Allow},
		{Call{Tool: "fetch", Input: json.RawMessage(`{"url":"https://golang.org.evil.example/"}`)}, Ask},
		{Call{Tool: "fetch", Input: json.RawMessage(`{"url":"https://evil.example/"}`)}, Deny},
		{Call{Tool: "mcp__db__query", Input: json.RawMessage(`{}`)}, Ask},
		{Call{Tool: "bash", Input: json.RawMessage(`{"command":"git status","COMMAND":"rm -rf /"}`)}, Ask},
		{Call{Tool: "read_file", Input: json.RawMessage(`{"path":"src/a.go","Path":".env"}`)}, Ask},
	}
	for _, tt := range tests {
		d, err := e.Evaluate(context.Background(), tt.call)
		if err != nil {
			t.Fatal(err)
		}
		if d.Effect != tt.want {
			t.Errorf("%s %s: %s (%s), want %s", tt.call.Tool, tt.call.Input, d.Effect, d.Reason, tt.want)
		}
	}
}

func TestLayers(t *testing.T) {
	e := newEval(t, map[Layer]string{
		LayerHost:    "deny bash: curl\nask bash: git push",
		LayerProject: "allow bash: git push",
		LayerUser:    "allow bash: curl",
		LayerSession: "allow bash: make",
	})
	tests := []struct {
		cmd       string
		want      Effect
		wantLayer Layer
	}{
		{"curl https://example.com", Deny, LayerHost}, // deny beats a later allow
		{"git push", Ask, LayerHost},                  // ask beats allow
		{"make", Allow, LayerSession},
	}
	for _, tt := range tests {
		d, _ := e.Evaluate(context.Background(), shellCall(tt.cmd))
		if d.Effect != tt.want || d.Rule == nil || d.Rule.Layer != tt.wantLayer {
			t.Errorf("%q: %s by %+v, want %s from the %s layer", tt.cmd, d.Effect, d.Rule, tt.want, tt.wantLayer)
		}
	}
}

func TestRuleFileErrors(t *testing.T) {
	tests := []struct {
		text, want string
		line       int
	}{
		{"allow bash: ls\npermit bash: ls", "starts with allow, ask or deny", 2},
		{"allow bash:", "empty pattern", 1},
		{"# c\n\nallow read_file: ls -la", "not a shell tool", 3},
		{"allow bash: path src/**", "not a file tool", 1},
		{"allow fetch: domain https://x.com/", "bad domain", 1},
		{"allow bash: -rf", "must start with a command name", 1},
		{"allow bash: git a||b", "empty alternative", 1},
		{"allow two words: x", "one tool name", 1},
		{"allow bash: git status\nexample allow bash: git push", "example expects allow but the rules give ask", 2},
		{"deny bash: rm -rf\nexample allow bash: rm --force --recursive x", "example expects allow but the rules give deny", 2},
		{"example maybe bash: ls", "example <allow|ask|deny>", 1},
	}
	for _, tt := range tests {
		e := NewEvaluator(nil)
		err := e.Load(LayerProject, "p.rules", []byte(tt.text))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != tt.line || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "p.rules:") {
			t.Errorf("%q: err = %v, want line %d with %q", tt.text, err, tt.line, tt.want)
		}
		if e.Len() != 0 {
			t.Errorf("%q: %d rules added from a bad file", tt.text, e.Len())
		}
	}
	// A good file with passing examples loads.
	e := NewEvaluator(nil)
	good := "deny bash: rm -r -f\nallow bash: git status|log\nexample deny bash: rm -fr /tmp/x\nexample deny bash: git log && rm --recursive --force x\nexample allow bash: git log -3\nexample ask bash: git push"
	if err := e.Load(LayerProject, "good.rules", []byte(good)); err != nil || e.Len() != 2 {
		t.Errorf("good file: %v, %d rules", err, e.Len())
	}
}

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"allow bash: git status|log", "deny bash: rm -rf", "allow read_file: path src/**", "allow fetch: domain *.x.com", "ask *", "allow bash: [", "deny bash: rm -"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		r, err := ParseRule(line, DefaultToolKinds)
		if err != nil {
			return
		}
		if r.Text == "" || !validEffect(r.Effect) {
			t.Fatalf("%q parsed to %+v", line, r)
		}
		// A parsed rule reparses to the same rule.
		r2, err := ParseRule(r.Text, DefaultToolKinds)
		if err != nil || r2.Kind != r.Kind || len(r2.Words) != len(r.Words) {
			t.Fatalf("%q does not reparse: %v", line, err)
		}
		e := NewEvaluator(nil)
		e.Add(LayerUser, r)
		e.Evaluate(context.Background(), shellCall("git status && rm -rf x"))
	})
}

type fixedAnalyzer struct {
	v   safety.Verdict
	err error
}

func (f fixedAnalyzer) Analyze(context.Context, safety.Call) (safety.Verdict, error) {
	return f.v, f.err
}

// TestExtraAnalyzers checks that extra analyzers (an LLM classifier) can
// only make a decision stricter, and that a failing one means "ask".
func TestExtraAnalyzers(t *testing.T) {
	rules := "allow bash: git status\n"
	tests := []struct {
		extra safety.Analyzer
		cmd   string
		want  Effect
	}{
		{fixedAnalyzer{v: safety.Verdict{Analyzer: "llm", Risk: safety.Low}}, "git status", Allow},
		{fixedAnalyzer{v: safety.Verdict{Analyzer: "llm", Risk: safety.Low}}, "rm -rf /", Deny}, // cannot lower
		{fixedAnalyzer{v: safety.Verdict{Analyzer: "llm", Risk: safety.Critical, Reasons: []string{"exfiltration"}}}, "git status", Deny},
		{fixedAnalyzer{err: errors.New("timeout")}, "git status", Ask},
		{fixedAnalyzer{v: safety.Verdict{Analyzer: "llm", Risk: "nonsense"}}, "ls", Ask},
	}
	for _, tt := range tests {
		e := NewEvaluator(&Options{Home: "/home/dev", Analyzers: []safety.Analyzer{tt.extra}})
		if err := e.Load(LayerProject, "p.rules", []byte(rules)); err != nil {
			t.Fatal(err)
		}
		d, err := e.Evaluate(context.Background(), shellCall(tt.cmd))
		if err != nil || d.Effect != tt.want {
			t.Errorf("%q with %+v: %s (%s), want %s", tt.cmd, tt.extra, d.Effect, d.Reason, tt.want)
		}
	}
}
