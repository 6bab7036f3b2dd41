package rootfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	secret      = "TOP SECRET outside the root\n"
	canaryText  = "canary: must never change\n"
	insideText  = "hello from inside\n"
	secretName  = "secret.txt"
	canaryName  = "canary.txt"
	outsideName = "outside"
)

// fixture is a root directory with a sibling "outside" directory that holds a
// secret and a canary; snap records the outside tree so a test can check
// nothing there changed.
type fixture struct {
	base, root, outside string
	fs                  *FS
	snap                map[string]string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	base := t.TempDir()
	fx := &fixture{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, outsideName)}
	for _, d := range []string{fx.root, fx.outside, filepath.Join(fx.outside, "sub"), filepath.Join(fx.root, "a", "b")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, filepath.Join(fx.outside, secretName), secret, 0o600)
	mustWrite(t, filepath.Join(fx.outside, canaryName), canaryText, 0o644)
	mustWrite(t, filepath.Join(fx.root, "inside.txt"), insideText, 0o644)
	old := time.Now().Add(-time.Hour)
	for _, n := range []string{secretName, canaryName} {
		if err := os.Chtimes(filepath.Join(fx.outside, n), old, old); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Open(fx.root)
	t.Cleanup(func() {
		if f != nil {
			f.Close()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	fx.fs = f
	fx.snap = snapshot(t, fx.outside)
	return fx
}

func mustWrite(t testing.TB, name, data string, perm fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t testing.TB, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// snapshot describes every file under dir: type, mode, size, mtime, content.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		desc := fmt.Sprintf("%v %d", fi.Mode(), fi.Size())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %v %q", fi.ModTime().UnixNano(), b)
		}
		m[p] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkOutside fails the test if anything outside the root changed.
func (fx *fixture) checkOutside(t testing.TB) {
	t.Helper()
	if diff := cmp.Diff(fx.snap, snapshot(t, fx.outside)); diff != "" {
		t.Errorf("outside the root changed (-want +got):\n%s", diff)
	}
}

func readString(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEscapeErrorDetected(t *testing.T) {
	fx := newFixture(t)
	if escapeErr == nil {
		t.Fatal("os.Root's escape error was not captured")
	}
	r, err := os.OpenRoot(fx.root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	mustSymlink(t, "../outside", filepath.Join(fx.root, "up"))
	for _, name := range []string{"..", "../x", "up/secret.txt", "a/../../x"} {
		_, err := r.Open(name)
		if err == nil || !isEscape(err) {
			t.Errorf("isEscape(os.Root.Open(%q) error %v) = false, want true", name, err)
		}
		if got := cause(err); got != ErrPathEscape {
			t.Errorf("cause(%v) = %v, want ErrPathEscape", err, got)
		}
	}
	if _, err := r.Open("missing"); isEscape(err) {
		t.Errorf("isEscape(%v) = true, want false", err)
	}
}

func TestReadWriteFile(t *testing.T) {
	fx := newFixture(t)
	f := fx.fs
	if err := f.WriteFile("new/dir/f.txt", []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	checkMode(t, filepath.Join(fx.root, "new/dir/f.txt"), 0o640)
	checkMode(t, filepath.Join(fx.root, "new/dir"), 0o755&^umask(t))
	// An existing file keeps its mode; perm is ignored.
	if err := f.WriteFile("new/dir/f.txt", []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	checkMode(t, filepath.Join(fx.root, "new/dir/f.txt"), 0o640)
	got, err := f.ReadFile("new/dir/f.txt", 0)
	if err != nil || string(got) != "two" {
		t.Fatalf("ReadFile = %q, %v; want %q", got, err, "two")
	}
	// Executable and read-only files keep their modes.
	for _, mode := range []fs.FileMode{0o755, 0o444, 0o600} {
		name := fmt.Sprintf("m%o", mode)
		mustWrite(t, filepath.Join(fx.root, name), "x", 0o600)
		if err := os.Chmod(filepath.Join(fx.root, name), mode); err != nil {
			t.Fatal(err)
		}
		if err := f.WriteFile(name, []byte("y"), 0o666); err != nil {
			t.Fatal(err)
		}
		checkMode(t, filepath.Join(fx.root, name), mode)
	}
	// A symbolic link inside the root is written through and kept.
	mustSymlink(t, "new/dir/f.txt", filepath.Join(fx.root, "cur"))
	if err := f.WriteFile("cur", []byte("three"), 0); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(fx.root, "new/dir/f.txt")); got != "three" {
		t.Errorf("target content = %q, want %q", got, "three")
	}
	if e, err := f.Stat("cur"); err != nil || e.Type != TypeSymlink {
		t.Errorf("Stat(cur) = %+v, %v; want a symlink", e, err)
	}
	noTempFiles(t, fx.root)

	// Limits and refusals.
	mustWrite(t, filepath.Join(fx.root, "big"), strings.Repeat("x", 100), 0o644)
	if _, err := f.ReadFile("big", 10); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile(big, 10) error = %v, want ErrTooLarge", err)
	}
	if got, err := f.ReadFile("big", 100); err != nil || len(got) != 100 {
		t.Errorf("ReadFile(big, 100) = %d bytes, %v; want 100", len(got), err)
	}
	if _, err := f.ReadFile("a", 0); !errors.Is(err, syscall.EISDIR) {
		t.Errorf("ReadFile(dir) error = %v, want EISDIR", err)
	}
	if err := f.WriteFile("a", nil, 0); !errors.Is(err, syscall.EISDIR) {
		t.Errorf("WriteFile(dir) error = %v, want EISDIR", err)
	}
	if err := f.WriteFile(".", nil, 0); !errors.Is(err, syscall.EISDIR) {
		t.Errorf("WriteFile(.) error = %v, want EISDIR", err)
	}
	if _, err := f.ReadFile("missing", 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing) error = %v, want ErrNotExist", err)
	}
	if err := f.WriteFile("x", nil, fs.ModeSetuid|0o755); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("WriteFile(setuid) error = %v, want ErrInvalid", err)
	}
	// Errors name the caller's path, never the host directory.
	if _, err := f.ReadFile("../outside/secret.txt", 0); err == nil || strings.Contains(err.Error(), fx.base) {
		t.Errorf("error %v names the host directory", err)
	}
	fx.checkOutside(t)
}

func umask(t *testing.T) fs.FileMode {
	t.Helper()
	p := filepath.Join(t.TempDir(), "probe")
	if err := os.Mkdir(p, 0o777); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return 0o777 &^ fi.Mode().Perm()
}

func checkMode(t *testing.T, name string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("mode of %s = %v, want %v", filepath.Base(name), got, want)
	}
}

func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), tempPrefix) {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

func TestEdit(t *testing.T) {
	tests := []struct {
		name      string
		content   string
		mode      fs.FileMode
		old, new  string
		wantCount int
		wantErr   error // matched with errors.Is; nil for an *EditError or success
		want      string
	}{
		{name: "unique", content: "a := 1\nb := 2\n", mode: 0o644, old: "b := 2", new: "b := 3", wantCount: 1, want: "a := 1\nb := 3\n"},
		{name: "keeps executable mode", content: "#!/bin/sh\necho hi\n", mode: 0o755, old: "hi", new: "bye", wantCount: 1, want: "#!/bin/sh\necho bye\n"},
		{name: "keeps private mode", content: "k=v", mode: 0o600, old: "v", new: "w", wantCount: 1, want: "k=w"},
		{name: "delete", content: "keep drop keep", mode: 0o644, old: " drop", new: "", wantCount: 1, want: "keep keep"},
		{name: "same", content: "x", mode: 0o644, old: "x", new: "x", wantCount: 1, want: "x"},
		{name: "not found", content: "abc", mode: 0o644, old: "zzz", new: "y", wantCount: 0, want: "abc"},
		{name: "ambiguous", content: "x x x", mode: 0o644, old: "x", new: "y", wantCount: 3, want: "x x x"},
		{name: "empty old", content: "abc", mode: 0o644, old: "", new: "y", wantErr: fs.ErrInvalid, want: "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t)
			p := filepath.Join(fx.root, "f")
			mustWrite(t, p, tt.content, 0o600)
			if err := os.Chmod(p, tt.mode); err != nil {
				t.Fatal(err)
			}
			n, err := fx.fs.Edit("f", tt.old, tt.new)
			if n != tt.wantCount {
				t.Errorf("Edit count = %d, want %d", n, tt.wantCount)
			}
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("Edit error = %v, want %v", err, tt.wantErr)
				}
			case tt.wantCount != 1:
				ee, ok := errors.AsType[*EditError](err)
				if !ok {
					t.Fatalf("Edit error = %v, want *EditError", err)
				}
				if diff := cmp.Diff(&EditError{Path: "f", Count: tt.wantCount}, ee); diff != "" {
					t.Errorf("EditError (-want +got):\n%s", diff)
				}
			case err != nil:
				t.Fatalf("Edit: %v", err)
			}
			if got := readString(t, p); got != tt.want {
				t.Errorf("content = %q, want %q", got, tt.want)
			}
			checkMode(t, p, tt.mode)
			noTempFiles(t, fx.root)
		})
	}
	t.Run("missing", func(t *testing.T) {
		fx := newFixture(t)
		if _, err := fx.fs.Edit("nope", "a", "b"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Edit(missing) error = %v, want ErrNotExist", err)
		}
	})
	t.Run("messages", func(t *testing.T) {
		for _, tt := range []struct {
			e    EditError
			want string
		}{
			{EditError{"f.go", 0}, "edit f.go: old string not found; it must occur exactly once"},
			{EditError{"f.go", 2}, "edit f.go: old string found 2 times; it must occur exactly once (include more surrounding text to make it unique)"},
		} {
			if got := tt.e.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		}
	})
}

func TestListStat(t *testing.T) {
	fx := newFixture(t)
	f := fx.fs
	mustWrite(t, filepath.Join(fx.root, "b.txt"), "12345", 0o600)
	mustSymlink(t, "inside.txt", filepath.Join(fx.root, "link"))
	if err := syscall.Mkfifo(filepath.Join(fx.root, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := f.List("")
	if err != nil {
		t.Fatal(err)
	}
	type nt struct {
		Name string
		Type EntryType
	}
	var gotNT []nt
	for _, e := range got {
		gotNT = append(gotNT, nt{e.Name, e.Type})
	}
	want := []nt{{"a", TypeDir}, {"b.txt", TypeFile}, {"fifo", TypeOther}, {"inside.txt", TypeFile}, {"link", TypeSymlink}}
	if diff := cmp.Diff(want, gotNT); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if got[1].Size != 5 || got[1].Mode != 0o600 || got[1].ModTime.IsZero() {
		t.Errorf("List entry b.txt = %+v", got[1])
	}
	// List follows a symbolic link to a directory inside the root.
	mustSymlink(t, "a", filepath.Join(fx.root, "alink"))
	if got, err := f.List("alink"); err != nil || len(got) != 1 || got[0].Name != "b" {
		t.Errorf("List(alink) = %+v, %v; want [b]", got, err)
	}
	if _, err := f.List("inside.txt"); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("List(file) error = %v, want ENOTDIR", err)
	}
	if _, err := f.List("nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("List(missing) error = %v, want ErrNotExist", err)
	}

	for _, tt := range []struct {
		name     string
		wantName string
		wantType EntryType
	}{
		{"", ".", TypeDir},
		{".", ".", TypeDir},
		{"a/b", "b", TypeDir},
		{"a/b/", "b", TypeDir},
		{"b.txt", "b.txt", TypeFile},
		{"link", "link", TypeSymlink},
		{"fifo", "fifo", TypeOther},
		{"alink/b", "b", TypeDir},
	} {
		e, err := f.Stat(tt.name)
		if err != nil || e.Name != tt.wantName || e.Type != tt.wantType {
			t.Errorf("Stat(%q) = %+v, %v; want name %q type %q", tt.name, e, err, tt.wantName, tt.wantType)
		}
	}
	if _, err := f.Stat("nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(missing) error = %v, want ErrNotExist", err)
	}
}

func TestRemoveMkdir(t *testing.T) {
	fx := newFixture(t)
	f := fx.fs
	if err := f.Mkdir("x/y/z", 0o700); err != nil {
		t.Fatal(err)
	}
	checkMode(t, filepath.Join(fx.root, "x/y/z"), 0o700)
	if err := f.Mkdir("x/y/z", 0); err != nil {
		t.Errorf("Mkdir(existing) = %v, want nil", err)
	}
	if err := f.Mkdir("inside.txt", 0); err == nil {
		t.Error("Mkdir(file) = nil, want an error")
	}
	if err := f.Remove("x/y"); err == nil {
		t.Error("Remove(non-empty dir) = nil, want an error")
	}
	if err := f.Remove("x/y/z"); err != nil {
		t.Fatal(err)
	}
	if err := f.Remove("inside.txt"); err != nil {
		t.Fatal(err)
	}
	if err := f.Remove("inside.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Remove(missing) = %v, want ErrNotExist", err)
	}
	for _, name := range []string{"", ".", "a/..", fx.root} {
		if err := f.Remove(name); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Remove(%q) = %v, want ErrInvalid", name, err)
		}
		if err := f.RemoveAll(name); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("RemoveAll(%q) = %v, want ErrInvalid", name, err)
		}
	}
	mustWrite(t, filepath.Join(fx.root, "x/y/f"), "f", 0o644)
	if err := f.RemoveAll("x"); err != nil {
		t.Fatal(err)
	}
	if err := f.RemoveAll("x"); err != nil {
		t.Errorf("RemoveAll(missing) = %v, want nil", err)
	}
	if _, err := os.Lstat(filepath.Join(fx.root, "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("x still exists after RemoveAll: %v", err)
	}
	if _, err := os.Lstat(fx.root); err != nil {
		t.Errorf("root removed: %v", err)
	}
}

func TestResolve(t *testing.T) {
	fx := newFixture(t)
	mustSymlink(t, "../outside", filepath.Join(fx.root, "up"))
	mustSymlink(t, fx.root, filepath.Join(fx.base, "rootlink"))
	// An FS opened through a symbolic link maps both spellings of the root.
	viaLink, err := Open(filepath.Join(fx.base, "rootlink"))
	if err != nil {
		t.Fatal(err)
	}
	defer viaLink.Close()

	tests := []struct {
		fs      *FS
		in      string
		want    string
		wantErr error
	}{
		{fx.fs, "", ".", nil},
		{fx.fs, ".", ".", nil},
		{fx.fs, "./a//b/", "a/b", nil},
		{fx.fs, "a/../inside.txt", "inside.txt", nil},
		{fx.fs, "not/yet/there.txt", "not/yet/there.txt", nil},
		{fx.fs, fx.root, ".", nil},
		{fx.fs, fx.root + "/", ".", nil},
		{fx.fs, fx.root + "/a/b/../x", "a/x", nil},
		{fx.fs, "/proc/self/root" + fx.root + "/inside.txt", "inside.txt", nil},
		{fx.fs, filepath.Join(fx.base, "rootlink", "inside.txt"), "inside.txt", nil},
		{viaLink, filepath.Join(fx.base, "rootlink", "a"), "a", nil},
		{viaLink, filepath.Join(fx.root, "a"), "a", nil},
		{fx.fs, "..", "", ErrPathEscape},
		{fx.fs, "../outside", "", ErrPathEscape},
		{fx.fs, "a/../../outside", "", ErrPathEscape},
		{fx.fs, "/etc/passwd", "", ErrPathEscape},
		{fx.fs, "/", "", ErrPathEscape},
		{fx.fs, fx.root + "/../outside/secret.txt", "", ErrPathEscape},
		{fx.fs, fx.root + "x/inside.txt", "", ErrPathEscape}, // a sibling sharing the prefix
		{fx.fs, fx.outside, "", ErrPathEscape},
		{fx.fs, "/proc/self/root/etc/passwd", "", ErrPathEscape},
		{fx.fs, "up", "", ErrPathEscape},
		{fx.fs, "up/secret.txt", "", ErrPathEscape},
		{fx.fs, fx.root + "/up/secret.txt", "", ErrPathEscape},
		{fx.fs, "a\x00b", "", fs.ErrInvalid},
	}
	for _, tt := range tests {
		got, err := tt.fs.Resolve(tt.in)
		if got != tt.want || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
			t.Errorf("Resolve(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
	fx.checkOutside(t)
}

// op is one tool call in the escape corpus; data is what a read returned.
type op func(fx *fixture) (data []byte, err error)

func read(name string) op {
	return func(fx *fixture) ([]byte, error) { return fx.fs.ReadFile(name, 0) }
}

func write(name string) op {
	return func(fx *fixture) ([]byte, error) { return nil, fx.fs.WriteFile(name, []byte("pwned\n"), 0o666) }
}

func edit(name string) op {
	return func(fx *fixture) ([]byte, error) { _, err := fx.fs.Edit(name, "SECRET", "pwned"); return nil, err }
}

func list(name string) op {
	return func(fx *fixture) ([]byte, error) {
		es, err := fx.fs.List(name)
		var b bytes.Buffer
		for _, e := range es {
			b.WriteString(e.Name + "\n")
		}
		return b.Bytes(), err
	}
}

func TestEscapeCorpus(t *testing.T) {
	long := strings.Repeat("d/", 2500) // 5000 bytes
	tests := []struct {
		name    string
		setup   func(t *testing.T, fx *fixture)
		op      op
		wantErr error // nil: the call must succeed
		check   func(t *testing.T, fx *fixture)
	}{
		{name: "symlink to /etc/passwd", setup: link("/etc/passwd", "passwd"), op: read("passwd"), wantErr: ErrPathEscape},
		{name: "symlink to dir outside (absolute)", setup: link("$OUT", "out"), op: read("out/secret.txt"), wantErr: ErrPathEscape},
		{name: "symlink to dir outside (relative)", setup: link("../outside", "out"), op: read("out/secret.txt"), wantErr: ErrPathEscape},
		{name: "relative symlink ../../outside from a subdir", setup: link("../../outside", "a/up"), op: read("a/up/secret.txt"), wantErr: ErrPathEscape},
		{name: "symlink chain ending outside", setup: chain, op: read("l1"), wantErr: ErrPathEscape},
		{name: "symlink chain through dirs ending outside", setup: chain, op: read("a/b/l3/secret.txt"), wantErr: ErrPathEscape},
		{name: "dotdot", op: read(".."), wantErr: ErrPathEscape},
		{name: "../x", op: read("../outside/secret.txt"), wantErr: ErrPathEscape},
		{name: "a/../../x", op: read("a/../../outside/secret.txt"), wantErr: ErrPathEscape},
		{name: "./../x", op: read("./../outside/secret.txt"), wantErr: ErrPathEscape},
		{name: "a/b/../../../x", op: read("a/b/../../../outside/secret.txt"), wantErr: ErrPathEscape},
		{name: "many dotdots", op: read(strings.Repeat("../", 40) + "etc/passwd"), wantErr: ErrPathEscape},
		{name: "dotdot with slashes and dots", op: read(".//a/./..//..//outside//secret.txt"), wantErr: ErrPathEscape},
		{name: "write ../x", op: write("../outside/canary.txt"), wantErr: ErrPathEscape},
		{name: "....// is a name inside", op: write("....//secret.txt"), check: inside("..../secret.txt")},
		{name: `..\x is a name inside`, op: write(`..\outside\secret.txt`), check: inside(`..\outside\secret.txt`)},
		{name: `..\x does not exist inside`, op: read(`..\outside\secret.txt`), wantErr: fs.ErrNotExist},
		{name: "%2e%2e/ is a name inside", op: read("%2e%2e/outside/secret.txt"), wantErr: fs.ErrNotExist},
		{name: "%2e%2e/ writes inside", op: write("%2e%2e/outside/secret.txt"), check: inside("%2e%2e/outside/secret.txt")},
		{name: "absolute /etc/passwd", op: read("/etc/passwd"), wantErr: ErrPathEscape},
		{name: "absolute outside secret", op: readAbs("$OUT/secret.txt"), wantErr: ErrPathEscape},
		{name: "absolute root/../outside", op: readAbs("$ROOT/../outside/secret.txt"), wantErr: ErrPathEscape},
		{name: "absolute path inside the root is mapped", op: readAbs("$ROOT/inside.txt")},
		{name: "absolute write inside the root is mapped", op: writeAbs("$ROOT/a/abs.txt"), check: inside("a/abs.txt")},
		{name: "hard link to outside: read", setup: hardlink, op: read("hl"), wantErr: ErrSpecialFile},
		{name: "hard link to outside: write", setup: hardlink, op: write("hl"), wantErr: ErrSpecialFile},
		{name: "hard link to outside: edit", setup: hardlink, op: edit("hl"), wantErr: ErrSpecialFile},
		{name: "/proc/self/root/etc/passwd", op: read("/proc/self/root/etc/passwd"), wantErr: ErrPathEscape},
		{name: "/proc/self/root to outside (absolute)", op: readAbs("/proc/self/root$OUT/secret.txt"), wantErr: ErrPathEscape},
		{name: "symlink to /proc/self/root", setup: link("/proc/self/root", "proc"), op: read("proc/etc/passwd"), wantErr: ErrPathEscape},
		{name: "symlink to /proc/self/cwd", setup: link("/proc/self/cwd", "cwd"), op: list("cwd"), wantErr: ErrPathEscape},
		{name: "symlink to absolute path inside", setup: link("$ROOT/inside.txt", "abslink"), op: read("abslink"), wantErr: ErrPathEscape},
		{name: "FIFO read does not block", setup: fifo, op: read("fifo"), wantErr: ErrSpecialFile},
		{name: "FIFO write refused", setup: fifo, op: write("fifo"), wantErr: ErrSpecialFile},
		{name: "FIFO edit refused", setup: fifo, op: edit("fifo"), wantErr: ErrSpecialFile},
		{name: "device node read", setup: device, op: read("null"), wantErr: ErrSpecialFile},
		{name: "device node write", setup: device, op: write("null"), wantErr: ErrSpecialFile},
		{name: "socket", setup: socket, op: read("sock"), wantErr: ErrSpecialFile},
		{name: "very long path (5000 bytes)", op: read(long), wantErr: fs.ErrInvalid},
		{name: "very long path write", op: write(long + "f"), wantErr: fs.ErrInvalid},
		{name: "long component (300 bytes)", op: write(strings.Repeat("n", 300)), wantErr: fs.ErrInvalid},
		{name: "NUL in the name", op: read("inside.txt\x00../../etc/passwd"), wantErr: fs.ErrInvalid},
		{name: "NUL in a written name", op: write("x\x00y"), wantErr: fs.ErrInvalid},
		{name: "write where the parent is a symlink outside", setup: link("../outside", "out"), op: write("out/new.txt"), wantErr: ErrPathEscape},
		{name: "write where the parent is an absolute symlink outside", setup: link("$OUT", "out"), op: write("out/canary.txt"), wantErr: ErrPathEscape},
		{name: "write creating dirs under a symlink outside", setup: link("../outside", "out"), op: write("out/sub/deep/new.txt"), wantErr: ErrPathEscape},
		{name: "mkdir through a symlinked parent", setup: link("../outside", "out"), op: func(fx *fixture) ([]byte, error) { return nil, fx.fs.Mkdir("out/newdir/x", 0) }, wantErr: ErrPathEscape},
		{name: "remove of a symlink removes the link", setup: link("../outside/secret.txt", "sl"), op: func(fx *fixture) ([]byte, error) { return nil, fx.fs.Remove("sl") }, check: gone("sl")},
		{name: "remove through a symlinked dir", setup: link("../outside", "out"), op: func(fx *fixture) ([]byte, error) { return nil, fx.fs.Remove("out/canary.txt") }, wantErr: ErrPathEscape},
		{name: "removeall does not follow symlinks", setup: link("../../outside", "a/out"), op: func(fx *fixture) ([]byte, error) { return nil, fx.fs.RemoveAll("a") }, check: gone("a")},
		{name: "removeall of a symlinked dir removes the link", setup: link("../outside", "out"), op: func(fx *fixture) ([]byte, error) { return nil, fx.fs.RemoveAll("out") }, check: gone("out")},
		{name: "list of a symlinked dir outside", setup: link("../outside", "out"), op: list("out"), wantErr: ErrPathEscape},
		{name: "list of /", op: list("/"), wantErr: ErrPathEscape},
		{name: "stat through a symlinked dir outside", setup: link("../outside", "out"), op: func(fx *fixture) ([]byte, error) { _, err := fx.fs.Stat("out/secret.txt"); return nil, err }, wantErr: ErrPathEscape},
		{name: "edit through a symlink out", setup: link("../outside/secret.txt", "sl"), op: edit("sl"), wantErr: ErrPathEscape},
		{name: "edit through a symlinked dir out", setup: link("../outside", "out"), op: edit("out/secret.txt"), wantErr: ErrPathEscape},
		{name: "write replacing a symlink out", setup: link("../outside/canary.txt", "sl"), op: write("sl"), wantErr: ErrPathEscape},
		{name: "write replacing a dangling symlink out", setup: link("../outside/new.txt", "sl"), op: write("sl"), wantErr: ErrPathEscape},
		{name: "write through a chain out", setup: chain, op: write("l1"), wantErr: ErrPathEscape},
		{name: "symlink loop", setup: loop, op: write("loop1"), wantErr: syscall.ELOOP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t)
			if tt.setup != nil {
				tt.setup(t, fx)
			}
			done := make(chan struct{})
			var data []byte
			var err error
			go func() {
				defer close(done)
				data, err = tt.op(fx)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the tool call blocked")
			}
			if tt.wantErr == nil && err != nil {
				t.Errorf("error = %v, want nil", err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error = %v, want one wrapping %v", err, tt.wantErr)
			}
			if bytes.Contains(data, []byte("SECRET")) || bytes.Contains(data, []byte("root:")) || bytes.Contains(data, []byte(secretName)) {
				t.Errorf("read data from outside the root: %q", data)
			}
			if err != nil && !strings.Contains(tt.name, "absolute") && strings.Contains(err.Error(), fx.base) {
				t.Errorf("error %q reveals the host directory", err)
			}
			if tt.check != nil {
				tt.check(t, fx)
			}
			fx.checkOutside(t)
			noTempFiles(t, fx.root)
		})
	}
}

func expand(fx *fixture, s string) string {
	return strings.NewReplacer("$OUT", fx.outside, "$ROOT", fx.root).Replace(s)
}

func link(target, name string) func(*testing.T, *fixture) {
	return func(t *testing.T, fx *fixture) { mustSymlink(t, expand(fx, target), filepath.Join(fx.root, name)) }
}

func readAbs(name string) op {
	return func(fx *fixture) ([]byte, error) { return fx.fs.ReadFile(expand(fx, name), 0) }
}

func writeAbs(name string) op {
	return func(fx *fixture) ([]byte, error) { return nil, fx.fs.WriteFile(expand(fx, name), []byte("pwned\n"), 0) }
}

// chain builds l1 → a/l2 → a/b/l4 → l3/secret.txt, where a/b/l3 →
// ../../../outside.
func chain(t *testing.T, fx *fixture) {
	mustSymlink(t, "a/l2", filepath.Join(fx.root, "l1"))
	mustSymlink(t, "b/l4", filepath.Join(fx.root, "a/l2"))
	mustSymlink(t, "l3/secret.txt", filepath.Join(fx.root, "a/b/l4"))
	mustSymlink(t, "../../../outside", filepath.Join(fx.root, "a/b/l3"))
}

func loop(t *testing.T, fx *fixture) {
	mustSymlink(t, "loop2", filepath.Join(fx.root, "loop1"))
	mustSymlink(t, "loop1", filepath.Join(fx.root, "loop2"))
}

func hardlink(t *testing.T, fx *fixture) {
	if err := os.Link(filepath.Join(fx.outside, secretName), filepath.Join(fx.root, "hl")); err != nil {
		t.Skipf("cannot create a hard link: %v", err)
	}
	fx.snap = snapshot(t, fx.outside) // the link count changed
}

func fifo(t *testing.T, fx *fixture) {
	if err := syscall.Mkfifo(filepath.Join(fx.root, "fifo"), 0o666); err != nil {
		t.Fatal(err)
	}
}

func device(t *testing.T, fx *fixture) {
	err := syscall.Mknod(filepath.Join(fx.root, "null"), syscall.S_IFCHR|0o666, int(mkdev(1, 3)))
	if errors.Is(err, syscall.EPERM) {
		t.Skip("cannot create a device node (not root, or no CAP_MKNOD)")
	}
	if err != nil {
		t.Fatal(err)
	}
}

func mkdev(major, minor uint64) uint64 {
	return (major&0xfff)<<8 | (minor & 0xff) | (major&^0xfff)<<32 | (minor&^0xff)<<12
}

func socket(t *testing.T, fx *fixture) {
	if err := syscall.Mknod(filepath.Join(fx.root, "sock"), syscall.S_IFSOCK|0o666, 0); err != nil {
		t.Fatal(err)
	}
}

// inside checks that the call wrote the file rel inside the root.
func inside(rel string) func(*testing.T, *fixture) {
	return func(t *testing.T, fx *fixture) {
		if got := readString(t, filepath.Join(fx.root, rel)); !strings.Contains(got, "pwned") {
			t.Errorf("%s inside the root = %q, want the written data", rel, got)
		}
	}
}

// gone checks that rel no longer exists inside the root.
func gone(rel string) func(*testing.T, *fixture) {
	return func(t *testing.T, fx *fixture) {
		if _, err := os.Lstat(filepath.Join(fx.root, rel)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still exists: %v", rel, err)
		}
	}
}

// TestSymlinkSwapRace swaps a directory inside the root for a symbolic link
// to the outside directory while the tools use paths through it: whatever
// the interleaving, nothing outside is read or written.
func TestSymlinkSwapRace(t *testing.T) {
	fx := newFixture(t)
	d := filepath.Join(fx.root, "d")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	// Same names as outside, so a path that leaked would hit the secret.
	mustWrite(t, filepath.Join(d, secretName), "inside SAFE", 0o644)
	mustWrite(t, filepath.Join(d, canaryName), "inside SAFE", 0o644)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		targets := []string{"../outside", fx.outside}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			os.Rename(d, d+".real")
			os.Symlink(targets[i%2], d)
			os.RemoveAll(d) // the link, or a directory a tool made meanwhile
			os.Rename(d+".real", d)
		}
	})
	deadline := time.Now().Add(500 * time.Millisecond)
	var reads, writes, escapes int
	for i := 0; time.Now().Before(deadline) || i < 200; i++ {
		data, err := fx.fs.ReadFile("d/"+secretName, 0)
		if bytes.Contains(data, []byte("SECRET")) {
			t.Fatalf("read the secret outside the root: %q", data)
		}
		if err == nil {
			reads++
		} else if errors.Is(err, ErrPathEscape) {
			escapes++
		}
		if err := fx.fs.WriteFile("d/"+canaryName, []byte("pwned"), 0); err == nil {
			writes++
		}
		fx.fs.Edit("d/"+secretName, "SECRET", "pwned")
		fx.fs.Mkdir("d/newdir", 0)
		fx.fs.Remove("d/newdir")
		fx.fs.List("d")
		fx.fs.Stat("d/" + secretName)
	}
	close(stop)
	wg.Wait()
	t.Logf("%d reads, %d writes succeeded; %d escapes refused", reads, writes, escapes)
	fx.checkOutside(t)
}

func TestConcurrent(t *testing.T) {
	fx := newFixture(t)
	var wg sync.WaitGroup
	const workers, rounds = 16, 30
	for w := range workers {
		wg.Go(func() {
			name := fmt.Sprintf("w%d/f.txt", w)
			for r := range rounds {
				want := fmt.Sprintf("worker %d round %d", w, r)
				if err := fx.fs.WriteFile(name, []byte(want), 0); err != nil {
					t.Error(err)
					return
				}
				got, err := fx.fs.ReadFile(name, 0)
				if err != nil || string(got) != want {
					t.Errorf("ReadFile = %q, %v; want %q", got, err, want)
					return
				}
				if _, err := fx.fs.List(filepath.Dir(name)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	// Edits of one file through one FS are serialized: none is lost.
	var parts []string
	for w := range workers {
		parts = append(parts, fmt.Sprintf("[%d:old]", w))
	}
	mustWrite(t, filepath.Join(fx.root, "shared"), strings.Join(parts, "\n"), 0o644)
	for w := range workers {
		wg.Go(func() {
			if _, err := fx.fs.Edit("shared", fmt.Sprintf("[%d:old]", w), fmt.Sprintf("[%d:new]", w)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := readString(t, filepath.Join(fx.root, "shared")); strings.Contains(got, ":old]") {
		t.Errorf("lost edits:\n%s", got)
	}
	noTempFiles(t, fx.root)
}

func FuzzPaths(f *testing.F) {
	for _, s := range []string{
		"", ".", "..", "../x", "a/../../x", "./../x", "a/b/../../../x", "....//", `..\x`,
		"%2e%2e/", "/etc/passwd", "/proc/self/root/etc/passwd", "out/secret.txt", "up/canary.txt",
		"chain", "a/b/c", "inside.txt", "a\x00b", "abs/secret.txt",
	} {
		f.Add(s)
	}
	fx := newFixture(f)
	mustSymlink(f, "../outside", filepath.Join(fx.root, "out"))
	mustSymlink(f, fx.outside, filepath.Join(fx.root, "abs"))
	mustSymlink(f, "../../outside", filepath.Join(fx.root, "a/up"))
	mustSymlink(f, "a/up/canary.txt", filepath.Join(fx.root, "chain"))
	outside := snapshot(f, fx.outside)
	f.Fuzz(func(t *testing.T, name string) {
		if len(name) > 256 {
			name = name[:256]
		}
		rel, resolveErr := fx.fs.Resolve(name)
		data, err := fx.fs.ReadFile(name, 1<<16)
		if bytes.Contains(data, []byte("SECRET")) || bytes.Contains(data, []byte("canary")) {
			t.Fatalf("ReadFile(%q) read outside the root: %q", name, data)
		}
		if err == nil && resolveErr != nil {
			t.Errorf("ReadFile(%q) succeeded but Resolve refused it: %v", name, resolveErr)
		}
		if err := fx.fs.WriteFile(name, []byte("fuzz"), 0); err == nil {
			if resolveErr != nil {
				t.Errorf("WriteFile(%q) succeeded but Resolve refused it: %v", name, resolveErr)
			}
			if !filepath.IsLocal(rel) {
				t.Errorf("WriteFile(%q) succeeded at %q, not inside the root", name, rel)
			}
		}
		// Stat does not follow a final symbolic link, so it may describe a
		// link Resolve refuses; its lexical resolution must still be inside.
		if _, err := fx.fs.Stat(name); err == nil {
			if lex, err := fx.fs.resolve(name); err != nil || lex != "." && !filepath.IsLocal(lex) {
				t.Errorf("Stat(%q) succeeded at %q, %v: not inside the root", name, lex, err)
			}
		}
		if diff := cmp.Diff(outside, snapshot(t, fx.outside)); diff != "" {
			t.Fatalf("%q changed outside the root (-want +got):\n%s", name, diff)
		}
	})
}

func BenchmarkWriteRead1MiB(b *testing.B) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	b.Run("rootfs", func(b *testing.B) {
		fx := newFixture(b)
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := fx.fs.WriteFile("f", data, 0); err != nil {
				b.Fatal(err)
			}
			if _, err := fx.fs.ReadFile("f", 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("os", func(b *testing.B) { // baseline: plain, non-atomic os calls
		name := filepath.Join(b.TempDir(), "f")
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := os.WriteFile(name, data, 0o644); err != nil {
				b.Fatal(err)
			}
			if _, err := os.ReadFile(name); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestClosed(t *testing.T) {
	fx := newFixture(t)
	if err := fx.fs.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.fs.ReadFile("inside.txt", 0); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("ReadFile after Close: %v, want ErrClosed", err)
	}
	if err := fx.fs.WriteFile("inside.txt", nil, 0); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("WriteFile after Close: %v, want ErrClosed", err)
	}
	if got := readString(t, filepath.Join(fx.root, "inside.txt")); got != insideText {
		t.Errorf("content after a write on a closed FS = %q", got)
	}
}
