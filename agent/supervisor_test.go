package agent_test

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/paddockdev/paddock/agent"
	"github.com/paddockdev/paddock/sandbox"
)

func supervisor(t *testing.T, sb *sandbox.Sandbox) *agent.Set {
	t.Helper()
	set, err := agent.SupervisorTools(sb, nil)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// makeRepo makes a git repository with one commit at dir.
func makeRepo(t *testing.T, dir string) string {
	t.Helper()
	writeFile(t, filepath.Join(dir, "README.md"), "# demo\n")
	writeFile(t, filepath.Join(dir, "src", "main.py"), "print('hi')\n")
	git(t, dir, "init", "-q")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "first")
	return git(t, dir, "rev-parse", "HEAD")
}

func TestListFilesIsDir(t *testing.T) {
	forEachBackend(t, func(t *testing.T, sb *sandbox.Sandbox, dir string) {
		writeFile(t, filepath.Join(dir, "AI_Agent_Model", "model.py"), "m")
		writeFile(t, filepath.Join(dir, "AI_Agent_Model", "readme.md"), "r")
		writeFile(t, filepath.Join(dir, "AI_Agent_Model", "train", "train.py"), "t")
		if err := os.Symlink("train", filepath.Join(dir, "AI_Agent_Model", "link")); err != nil {
			t.Fatal(err)
		}
		set := supervisor(t, sb)
		res := call(t, set, "list_files", map[string]any{"path": "AI_Agent_Model"})
		e := envelopeOf(t, res)
		var items []agent.FileItem
		if err := json.Unmarshal(e.Metadata.Stdout, &items); err != nil {
			t.Fatal(err)
		}
		want := []agent.FileItem{
			{Name: "link", Path: "AI_Agent_Model/link", IsDir: false},
			{Name: "model.py", Path: "AI_Agent_Model/model.py", IsDir: false},
			{Name: "readme.md", Path: "AI_Agent_Model/readme.md", IsDir: false},
			{Name: "train", Path: "AI_Agent_Model/train", IsDir: true},
		}
		if diff := cmp.Diff(want, items); diff != "" {
			t.Errorf("list_files (-want +got):\n%s", diff)
		}
		if e.Metadata.Action != "list_files" || e.Metadata.DirPath != "AI_Agent_Model" || string(e.Result) != string(e.Metadata.Stdout) || res.IsError {
			t.Errorf("envelope = %+v", e)
		}
		res = call(t, set, "list_files", map[string]any{"recursive": true, "max_entries": 4})
		e = envelopeOf(t, res)
		if err := json.Unmarshal(e.Metadata.Stdout, &items); err != nil {
			t.Fatal(err)
		}
		if len(items) != 4 || items[0].Path != "AI_Agent_Model" || !items[0].IsDir || !strings.Contains(e.Metadata.Stderr, "stopped after 4 entries") {
			t.Errorf("recursive: %+v, stderr %q", items, e.Metadata.Stderr)
		}
		if res := call(t, set, "list_files", map[string]any{"path": "../"}); !res.IsError || !strings.Contains(res.Content, "leaves the sandbox") {
			t.Errorf("escape: %+v", res)
		}
		if res := call(t, set, "list_files", map[string]any{"path": "nope"}); !res.IsError || !strings.Contains(res.Content, "does not exist") {
			t.Errorf("missing: %+v", res)
		}
	})
}

func TestCloneRepo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	// A bare repository outside the sandbox, reached by a file:// URL; the
	// bwrap sandbox gets its directory mounted.
	src := t.TempDir()
	head := makeRepo(t, filepath.Join(src, "work"))
	bare := filepath.Join(src, "demo.git")
	git(t, src, "clone", "-q", "--bare", filepath.Join(src, "work"), bare)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			sb, dir := b.new(t, sandbox.Spec{Writable: []string{src}})
			set := supervisor(t, sb)
			// URL.
			res := call(t, set, "clone_repo", map[string]any{"git_url": "file://" + bare, "dir_path": "repos"})
			e := envelopeOf(t, res)
			if res.IsError {
				t.Fatalf("clone: %s", res.Content)
			}
			var out map[string]string
			if err := json.Unmarshal(e.Metadata.Stdout, &out); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(map[string]string{"repo": "file://" + bare, "path": "repos/demo"}, out); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if e.Metadata.Action != "clone_repo" || e.Metadata.DirPath != "repos" || !strings.HasPrefix(e.Command, "git clone") {
				t.Errorf("envelope = %+v", e)
			}
			if got := git(t, filepath.Join(dir, "repos", "demo"), "rev-parse", "HEAD"); got != head {
				t.Errorf("cloned HEAD %s, want %s", got, head)
			}
			// A local path inside the sandbox, under another name.
			res = call(t, set, "clone_repo", map[string]any{"git_url": "repos/demo", "name": "copy"})
			if res.IsError {
				t.Fatalf("local clone: %s", res.Content)
			}
			if got := readFile(t, filepath.Join(dir, "copy", "src", "main.py")); got != "print('hi')\n" {
				t.Errorf("local clone main.py = %q", got)
			}
			for _, tc := range []struct {
				input map[string]any
				want  string
			}{
				{map[string]any{"git_url": "repos/demo", "name": "copy"}, `"copy" already exists`},
				{map[string]any{"git_url": "ext::sh -c touch% /tmp/pwned"}, "transport helpers"},
				{map[string]any{"git_url": "--upload-pack=touch /tmp/pwned"}, "starts with '-'"},
				{map[string]any{"git_url": "ftp://example.com/x.git"}, `scheme "ftp"`},
				{map[string]any{"git_url": "repos/demo", "name": "../out"}, "cannot name the clone"},
				{map[string]any{"git_url": "repos/demo", "dir_path": "../.."}, "leaves the sandbox"},
			} {
				if res := call(t, set, "clone_repo", tc.input); !res.IsError || !strings.Contains(res.Content, tc.want) {
					t.Errorf("clone_repo(%v) = %+v, want an error containing %q", tc.input, res, tc.want)
				}
			}
			// A repository that is not there: git's own error, in the envelope.
			res = call(t, set, "clone_repo", map[string]any{"git_url": "file://" + filepath.Join(src, "nope.git")})
			e = envelopeOf(t, res)
			var result string
			if !res.IsError || json.Unmarshal(e.Result, &result) != nil || !strings.Contains(result, "nope.git") || result != e.Metadata.Stderr {
				t.Errorf("missing repo: %+v", e)
			}
		})
	}
}

// wheel writes a minimal pure-Python wheel of package demo_pkg, so that pip
// can install it without the network.
func wheel(t *testing.T, path string) {
	t.Helper()
	files := []struct{ name, body string }{
		{"demo_pkg/__init__.py", "VALUE = 42\n"},
		{"demo_pkg-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 0.1\n"},
		{"demo_pkg-0.1.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: paddock-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	var record strings.Builder
	for _, file := range files {
		w, err := zw.Create(file.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(file.body))
		sum := sha256.Sum256([]byte(file.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", file.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(file.body))
	}
	record.WriteString("demo_pkg-0.1.dist-info/RECORD,,\n")
	w, _ := zw.Create("demo_pkg-0.1.dist-info/RECORD")
	w.Write([]byte(record.String()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func pythonVersion(t *testing.T, sb *sandbox.Sandbox) string {
	t.Helper()
	res, err := sb.Exec(t.Context(), sandbox.ExecRequest{Argv: []string{"python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"}})
	if err != nil || !res.Success() {
		t.Skipf("python3 does not run in this sandbox: %v %s", err, res.Stderr)
	}
	return strings.TrimSpace(string(res.Stdout))
}

func TestVenv(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			sb, dir := b.new(t, sandbox.Spec{})
			// Making a venv with pip takes seconds to tens of seconds on a
			// loaded machine: the directory backend installs a wheel with
			// pip, the others make a venv without pip.
			testVenv(t, sb, dir, b.name == "dir")
		})
	}
}

func testVenv(t *testing.T, sb *sandbox.Sandbox, dir string, withPip bool) {
	version := pythonVersion(t, sb)
	set := supervisor(t, sb)
	wheel(t, filepath.Join(dir, "proj", "wheels", "demo_pkg-0.1-py3-none-any.whl"))
	writeFile(t, filepath.Join(dir, "proj", "requirements.txt"), "--no-index\n./wheels/demo_pkg-0.1-py3-none-any.whl\n")
	writeFile(t, filepath.Join(dir, "proj", "train.py"), "import sys\nprint('args', sys.argv[1:])\n")

	// Errors before anything is made.
	for _, tc := range []struct {
		input map[string]any
		want  string
	}{
		{map[string]any{"dir_path": "proj", "interpreter": "python-nope"}, `interpreter "python-nope" was not found in the sandbox`},
		{map[string]any{"dir_path": "proj", "python_version": "2.1"}, `interpreter "python2.1" was not found`},
		{map[string]any{"dir_path": "proj", "interpreter": "python3", "python_version": "2.7"}, "is Python " + version + ", not 2.7"},
		{map[string]any{"dir_path": "proj", "python_version": "three"}, "must be major.minor"},
		{map[string]any{"dir_path": "proj", "venv_name": "../v"}, "must be a directory name inside dir_path"},
		{map[string]any{"dir_path": "proj", "requirements": "nope.txt"}, "does not exist"},
		{map[string]any{"dir_path": "proj", "requirements": "/etc/passwd"}, "must be a file inside dir_path"},
		{map[string]any{"dir_path": "proj", "requirements": "../requirements.txt"}, "must be a file inside dir_path"},
		{map[string]any{"dir_path": "proj", "upgrade_deps": "yes"}, "upgrade_deps: must be a boolean"},
		{map[string]any{"dir_path": "proj", "with_pip": false, "requirements": "requirements.txt"}, "with_pip false cannot go with requirements"},
	} {
		if res := call(t, set, "create_venv", tc.input); !res.IsError || !strings.Contains(res.Content, tc.want) {
			t.Errorf("create_venv(%v) = %+v, want an error containing %q", tc.input, res, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "proj", ".venv")); err == nil {
		t.Fatal("a failed create_venv left a venv")
	}

	input := map[string]any{"dir_path": "proj", "python_version": version}
	want := map[string]any{"venv": "proj/.venv", "python": "proj/.venv/bin/python", "pip": "proj/.venv/bin/pip",
		"installed": true, "upgraded": false, "interpreter_cmd": "python" + version}
	if withPip {
		input["requirements"] = "requirements.txt"
	} else {
		input["with_pip"] = false
		want["installed"], want["pip"] = false, ""
	}
	res := call(t, set, "create_venv", input)
	e := envelopeOf(t, res)
	if res.IsError {
		t.Fatalf("create_venv: %s", res.Content)
	}
	var out map[string]any
	if err := json.Unmarshal(e.Metadata.Stdout, &out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("create_venv stdout (-want +got):\n%s", diff)
	}
	if e.Metadata.Action != "create_venv" || e.Metadata.DirPath != "proj" || !strings.Contains(e.Command, "-m venv") {
		t.Errorf("envelope = %+v", e)
	}
	if _, err := os.Stat(filepath.Join(dir, "proj", ".venv", "pyvenv.cfg")); err != nil {
		t.Errorf("no venv: %v", err)
	}

	type runCase struct {
		name    string
		input   map[string]any
		isError bool
		stdout  string
		stderr  string
		code    int
	}
	cases := []runCase{
		{"runs the venv's python", map[string]any{"venv_path": "proj/.venv", "argv": []string{"-c", "import sys; print(sys.prefix.endswith('.venv'), sys.prefix != sys.base_prefix)"}}, false, "True True\n", "", 0},
		{"script in cwd with args", map[string]any{"venv_path": "proj/.venv", "cwd": "proj", "argv": []string{"train.py", "--epochs", "10"}}, false, "args ['--epochs', '10']\n", "", 0},
		{"exit code", map[string]any{"venv_path": "proj/.venv", "argv": []string{"-c", "import sys; print('bye', file=sys.stderr); sys.exit(4)"}}, true, "", "bye\n", 4},
		{"timeout", map[string]any{"venv_path": "proj/.venv", "argv": []string{"-c", "import time; time.sleep(30)"}, "timeout": 1}, true, "", "killed: timed out", -1},
	}
	if withPip {
		cases = append(cases, runCase{"imports the installed package", map[string]any{"venv_path": "proj/.venv", "argv": []string{"-c", "import demo_pkg; print(demo_pkg.VALUE)"}}, false, "42\n", "", 0})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, set, "run_in_venv", tc.input)
			e := envelopeOf(t, res)
			var stdout string
			json.Unmarshal(e.Metadata.Stdout, &stdout)
			if res.IsError != tc.isError || stdout != tc.stdout || !strings.Contains(e.Metadata.Stderr, tc.stderr) || e.Metadata.ExitCode == nil || *e.Metadata.ExitCode != tc.code {
				t.Errorf("run_in_venv = %s", res.Content)
			}
		})
	}
	for _, tc := range []struct {
		input map[string]any
		want  string
	}{
		{map[string]any{"venv_path": "proj", "argv": []string{"-V"}}, `"proj" is not a virtual environment`},
		{map[string]any{"venv_path": "proj/.venv", "argv": []string{}}, "argv: must have at least 1 items"},
		{map[string]any{"venv_path": "proj/.venv", "argv": []string{"-V"}, "cwd": "../x"}, "must be a directory relative"},
	} {
		if res := call(t, set, "run_in_venv", tc.input); !res.IsError || !strings.Contains(res.Content, tc.want) {
			t.Errorf("run_in_venv(%v) = %+v, want an error containing %q", tc.input, res, tc.want)
		}
	}
}

func TestEditAction(t *testing.T) {
	forEachBackend(t, func(t *testing.T, sb *sandbox.Sandbox, dir string) {
		set := supervisor(t, sb)
		writeFile(t, filepath.Join(dir, "a", "x.py"), "a1")
		writeFile(t, filepath.Join(dir, "b", "x.py"), "b1")
		writeFile(t, filepath.Join(dir, "b", "x.py.bak"), "old backup")
		if err := os.Chmod(filepath.Join(dir, "a", "x.py"), 0o755); err != nil {
			t.Fatal(err)
		}
		res := call(t, set, "edit", map[string]any{"files": []map[string]string{
			{"path": "a/x.py", "content": "a2"},
			{"path": "b/x.py", "content": "b2"},
			{"path": "c/new.py", "content": "c1"},
		}})
		e := envelopeOf(t, res)
		var out struct {
			Message string             `json:"message"`
			Changes []agent.EditChange `json:"changes"`
		}
		if err := json.Unmarshal(e.Metadata.Stdout, &out); err != nil || res.IsError {
			t.Fatalf("%v %s", err, res.Content)
		}
		wantChanges := []agent.EditChange{{File: "a/x.py", Bak: "a/x.py.bak"}, {File: "b/x.py", Bak: "b/x.py.bak.1"}, {File: "c/new.py", Bak: ""}}
		if diff := cmp.Diff(wantChanges, out.Changes); diff != "" || out.Message != "edited 3 files" {
			t.Errorf("changes (-want +got):\n%s\nmessage %q", diff, out.Message)
		}
		for name, want := range map[string]string{
			"a/x.py": "a2", "a/x.py.bak": "a1", "b/x.py": "b2", "b/x.py.bak": "old backup", "b/x.py.bak.1": "b1", "c/new.py": "c1",
		} {
			if got := readFile(t, filepath.Join(dir, name)); got != want {
				t.Errorf("%s = %q, want %q", name, got, want)
			}
		}
		if fi, err := os.Stat(filepath.Join(dir, "a", "x.py")); err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("a/x.py mode: %v %v", fi.Mode(), err)
		}
		// Again: the next backup of a/x.py is .bak.1.
		res = call(t, set, "edit", map[string]any{"files": []map[string]string{{"path": "a/x.py", "content": "a3"}}})
		if e := envelopeOf(t, res); !strings.Contains(string(e.Metadata.Stdout), `"bak":"a/x.py.bak.1"`) {
			t.Errorf("second edit: %s", e.Metadata.Stdout)
		}
		// A backup name that another file of the call writes is skipped.
		res = call(t, set, "edit", map[string]any{"files": []map[string]string{{"path": "c/new.py", "content": "c2"}, {"path": "c/new.py.bak", "content": "mine"}}})
		if e := envelopeOf(t, res); res.IsError || !strings.Contains(string(e.Metadata.Stdout), `"bak":"c/new.py.bak.1"`) || readFile(t, filepath.Join(dir, "c/new.py.bak")) != "mine" {
			t.Errorf("backup collision: %s", res.Content)
		}

		// All or nothing: one bad path, nothing written.
		before := snapshot(t, dir)
		for _, tc := range []struct {
			files []map[string]string
			want  string
		}{
			{[]map[string]string{{"path": "a/x.py", "content": "zz"}, {"path": "../out.py", "content": "zz"}}, "must be a file path relative"},
			{[]map[string]string{{"path": "a/x.py", "content": "zz"}, {"path": "./a/x.py", "content": "yy"}}, `are both "a/x.py"`},
			{[]map[string]string{{"path": "a/x.py", "content": "zz"}, {"path": "a", "content": "yy"}}, `"a" is not a regular file`},
			{[]map[string]string{{"path": "a/x.py", "content": "zz"}, {"path": "a/x.py/deeper", "content": "yy"}}, "a/x.py/deeper"},
			{[]map[string]string{}, "files: must have at least 1 items"},
		} {
			res := call(t, set, "edit", map[string]any{"files": tc.files})
			if !res.IsError || !strings.Contains(res.Content, tc.want) {
				t.Errorf("edit(%v) = %+v, want an error containing %q", tc.files, res, tc.want)
			}
			if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
				t.Errorf("edit(%v) changed files (-before +after):\n%s", tc.files, diff)
			}
		}
	})
}

// snapshot returns every regular file under dir and its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		m[rel] = readFile(t, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
