package safety

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSegments checks how commands are split and what each segment is
// seen to run, read and write.
func TestSegments(t *testing.T) {
	a := NewShellAnalyzer(&ShellOptions{Home: "/home/dev"})
	type seg struct {
		Argv   []string
		Writes []string
		Risk   Risk
	}
	D := Dynamic
	tests := []struct {
		cmd  string
		want []seg
	}{
		{"git status && go vet ./... || echo x; ls | wc -l & pwd", []seg{
			{[]string{"git", "status"}, nil, Low}, {[]string{"go", "vet", "./..."}, nil, Low}, {[]string{"echo", "x"}, nil, Low},
			{[]string{"ls"}, nil, Low}, {[]string{"wc", "-l"}, nil, Low}, {[]string{"pwd"}, nil, Low}}},
		{"(cd src && ls) > out.txt", []seg{{nil, []string{"out.txt"}, Medium}, {[]string{"cd", "src"}, nil, Low}, {[]string{"ls"}, nil, Low}}},
		{"echo $(cat `pwd`/x) <(ls)", []seg{{[]string{"echo", D, D}, nil, Low}, {[]string{"cat", D}, nil, Low}, {[]string{"pwd"}, nil, Low}, {[]string{"ls"}, nil, Low}}},
		{"sudo -u root timeout 5 rm -rf /tmp/x", []seg{{[]string{"sudo", "-u", "root", "timeout", "5", "rm", "-rf", "/tmp/x"}, nil, High}, {[]string{"rm", "-rf", "/tmp/x"}, []string{"/tmp/x"}, High}}},
		{"env A=1 nice -n 5 nohup git log", []seg{{[]string{"git", "log"}, nil, Low}}},
		{"find . -name '*.tmp' -exec rm {} +", []seg{{[]string{"find", ".", "-name", "*.tmp", "-exec", "rm", "{}", "+"}, nil, Low}, {[]string{"rm", D}, nil, Medium}}},
		{"ls | xargs -n1 cat", []seg{{[]string{"ls"}, nil, Low}, {[]string{"xargs", "-n1", "cat"}, nil, Low}, {[]string{"cat", D}, nil, Low}}},
		{`bash -c "ls; eval 'pwd'"`, []seg{{[]string{"bash", "-c", "ls; eval 'pwd'"}, nil, Low}, {[]string{"ls"}, nil, Low}, {[]string{"eval", "pwd"}, nil, Low}, {[]string{"pwd"}, nil, Low}}},
		{"echo hi >> notes.md 2>/dev/null", []seg{{[]string{"echo", "hi"}, []string{"notes.md", "/dev/null"}, Medium}}},
		{`"r"m -'f'r \~/x`, []seg{{[]string{"rm", "-fr", "~/x"}, []string{"~/x"}, High}}},
		{"rm -rf $HOME", []seg{{[]string{"rm", "-rf", "~"}, []string{"~"}, Critical}}},
	}
	for _, tt := range tests {
		v := a.AnalyzeCommand(tt.cmd, "/home/dev/proj")
		var got []seg
		for _, s := range v.Segments {
			got = append(got, seg{s.Argv, s.Writes, s.Risk})
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%q (-want +got):\n%s", tt.cmd, d)
		}
	}
}

// TestFailClosed checks the forms that can never be safe.
func TestFailClosed(t *testing.T) {
	a := NewShellAnalyzer(nil)
	for cmd, reason := range map[string]string{
		"echo 'unterminated": "does not parse",
		"$CMD -x":            "only known at run time",
		"frobnicate --all":   "unknown command",
		"ls\r rm -rf x":      "control characters",
		"0<()":               "second tokenizer",
		"ls \u202e":          "bidirectional",
		"ｌｓ":                 "not plain ASCII",
		"ls –la":             "look-alike",
	} {
		v := a.AnalyzeCommand(cmd, "")
		if v.Risk == Low || v.Safe() {
			t.Errorf("%q: risk %s", cmd, v.Risk)
		}
		if reason != "" && !strings.Contains(strings.Join(v.Reasons, "|"), reason) {
			t.Errorf("%q: reasons %q lack %q", cmd, v.Reasons, reason)
		}
	}
	deep := NewShellAnalyzer(&ShellOptions{MaxDepth: 2})
	if v := deep.AnalyzeCommand(`bash -c "bash -c 'bash -c ls'"`, ""); v.Risk != Unknown || !strings.Contains(v.Reasons[0], "nested too deeply") {
		t.Errorf("depth limit: %s %q", v.Risk, v.Reasons)
	}
}

func TestAnalyzeInput(t *testing.T) {
	a := NewShellAnalyzer(nil)
	for _, tt := range []struct {
		call Call
		want Risk
		msg  string
	}{
		{Call{Tool: "bash", Args: json.RawMessage(`{"command":"ls"}`)}, Low, ""},
		{Call{Tool: "run_shell_command", Args: json.RawMessage(`{"command":"ls"}`)}, Low, ""},
		{Call{Tool: "read_file", Args: json.RawMessage(`{"path":"x"}`)}, Unknown, "not a shell tool"},
		{Call{Tool: "bash", Args: json.RawMessage(`{"cmd":"ls"}`)}, Unknown, `no "command" field`},
		{Call{Tool: "bash", Args: json.RawMessage(`{"command":1}`)}, Unknown, "not a string"},
		{Call{Tool: "bash", Args: json.RawMessage(`[`)}, Unknown, "not a JSON object"},
		{Call{Tool: "bash", Args: json.RawMessage(`{"command":"ls","Command":"rm -rf /"}`)}, Unknown, "ambiguous"},
	} {
		v, err := a.Analyze(context.Background(), tt.call)
		if err != nil || v.Risk != tt.want || tt.msg != "" && !strings.Contains(v.Reasons[0], tt.msg) {
			t.Errorf("%s %s: %s %q %v", tt.call.Tool, tt.call.Args, v.Risk, v.Reasons, err)
		}
	}
}

func TestCredentialPath(t *testing.T) {
	for p, want := range map[string]bool{
		".env": true, "config/.env.production": true, ".env.example": false, "/home/dev/.ssh/config": true,
		"~/.aws/credentials": true, "id_ed25519": true, "server.pem": true, "main.go": false, "/etc/shadow": true,
		"docs/environment.md": false,
	} {
		if _, got := CredentialPath(p, "/home/dev"); got != want {
			t.Errorf("CredentialPath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestRiskOrder(t *testing.T) {
	order := []Risk{Low, Medium, Unknown, High, Critical}
	for i := 1; i < len(order); i++ {
		if order[i].Severity() <= order[i-1].Severity() || order[i-1].Max(order[i]) != order[i] {
			t.Errorf("%s should be above %s", order[i], order[i-1])
		}
	}
	if Risk("bogus").Max(Low) != Unknown {
		t.Error("an invalid risk does not count as Unknown")
	}
}
