package crashfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/paddockdev/paddock/internal/vfs"
)

// imageNames are the names of the eight images in the order Images returns
// them.
var imageNames = []string{
	"keep/keepnames", "keep/dropnames",
	"drop/keepnames", "drop/dropnames",
	"cut/keepnames", "cut/dropnames",
	"zero/keepnames", "zero/dropnames",
}

// rle summarises data as runs, "a*1000 b*536", so that diffs of large
// contents stay readable; "" is the empty content.
func rle(data []byte) string {
	var runs []string
	for i := 0; i < len(data); {
		j := i
		for j < len(data) && data[j] == data[i] {
			j++
		}
		c := string(data[i])
		if data[i] == 0 {
			c = "0"
		}
		runs = append(runs, fmt.Sprintf("%s*%d", c, j-i))
		i = j
	}
	return strings.Join(runs, " ")
}

func repeat(c byte, n int) []byte { return bytes.Repeat([]byte{c}, n) }

// files returns every regular file of fsys, summarised with rle.
func files(fsys *FS) map[string]string {
	m := map[string]string{}
	fsys.Walk(func(p string, data []byte) { m[p] = rle(data) })
	return m
}

// imageFiles returns, by image name, the files of every image.
func imageFiles(t *testing.T, fsys *FS) map[string]map[string]string {
	t.Helper()
	images := fsys.Images()
	if len(images) != len(imageNames) {
		t.Fatalf("Images() returned %d images, want %d", len(images), len(imageNames))
	}
	m := map[string]map[string]string{}
	for _, img := range images {
		m[img.Name] = files(img.FS())
	}
	return m
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, fsys *FS, name string, flag int) vfs.File {
	t.Helper()
	f, err := fsys.OpenFile(name, flag, 0o644)
	must(t, err)
	return f
}

func write(t *testing.T, f vfs.File, data []byte) {
	t.Helper()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
}

func TestImageNames(t *testing.T) {
	fsys := New()
	fsys.CrashNow()
	var got []string
	for _, img := range fsys.Images() {
		got = append(got, img.Name)
	}
	if diff := cmp.Diff(imageNames, got); diff != "" {
		t.Errorf("image names (-want +got):\n%s", diff)
	}
}

// TestDataModesAfterAppend checks each data mode on a file that had durable
// content and then an unsynced append.
func TestDataModesAfterAppend(t *testing.T) {
	for _, tc := range []struct {
		name             string
		durable, appends int
		want             map[string]string // by data mode
	}{
		{
			name: "aligned cut", durable: 1000, appends: 2000,
			want: map[string]string{
				"keep": "a*1000 b*2000",
				"drop": "a*1000",
				// roundDown(1000+2000/2, 512) = 1536.
				"cut":  "a*1000 b*536",
				"zero": "a*1000 0*2000",
			},
		},
		{
			name: "cut never below durable", durable: 100, appends: 100,
			want: map[string]string{
				"keep": "a*100 b*100",
				"drop": "a*100",
				// roundDown(150, 512) = 0, raised to the durable 100.
				"cut":  "a*100",
				"zero": "a*100 0*100",
			},
		},
		{
			name: "new file", durable: 0, appends: 1100,
			want: map[string]string{
				"keep": "b*1100",
				"drop": "",
				"cut":  "b*512",
				"zero": "0*1100",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := New()
			must(t, fsys.WriteFile("/d/f", repeat('a', tc.durable), 0o644))
			f := open(t, fsys, "/d/f", os.O_WRONLY|os.O_APPEND)
			write(t, f, repeat('b', tc.appends))
			fsys.CrashNow()

			want := map[string]map[string]string{}
			for _, name := range imageNames {
				// The name is durable, so both namespace modes agree.
				mode, _, _ := strings.Cut(name, "/")
				want[name] = map[string]string{"/d/f": tc.want[mode]}
			}
			if diff := cmp.Diff(want, imageFiles(t, fsys)); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTruncateThenWrite checks each data mode after rewrites of a durable
// file.
func TestTruncateThenWrite(t *testing.T) {
	for _, tc := range []struct {
		name     string
		workload func(t *testing.T, fsys *FS)
		want     map[string]string // by data mode
	}{
		{
			name: "Truncate",
			workload: func(t *testing.T, fsys *FS) {
				f := open(t, fsys, "/d/f", os.O_RDWR)
				must(t, f.Truncate(0))
				write(t, f, repeat('n', 600))
			},
			want: map[string]string{"keep": "n*600", "drop": "o*1000", "cut": "", "zero": "0*600"},
		},
		{
			name: "O_TRUNC",
			workload: func(t *testing.T, fsys *FS) {
				f := open(t, fsys, "/d/f", os.O_WRONLY|os.O_TRUNC)
				write(t, f, repeat('n', 600))
			},
			want: map[string]string{"keep": "n*600", "drop": "o*1000", "cut": "", "zero": "0*600"},
		},
		{
			name: "Truncate Sync",
			workload: func(t *testing.T, fsys *FS) {
				f := open(t, fsys, "/d/f", os.O_RDWR)
				must(t, f.Truncate(0))
				must(t, f.Sync())
				write(t, f, repeat('n', 600))
			},
			want: map[string]string{"keep": "n*600", "drop": "", "cut": "", "zero": "0*600"},
		},
		{
			name: "Sync then overwrite in place",
			workload: func(t *testing.T, fsys *FS) {
				f := open(t, fsys, "/d/f", os.O_RDWR)
				write(t, f, repeat('n', 600))
				must(t, f.Sync())
				if _, err := f.Seek(700, io.SeekStart); err != nil {
					t.Fatal(err)
				}
				write(t, f, repeat('m', 100))
			},
			// p = 700; cut keeps current[:700], dropping the unchanged
			// tail too: the model's simplification for overwrites.
			want: map[string]string{
				"keep": "n*600 o*100 m*100 o*200",
				"drop": "n*600 o*400",
				"cut":  "n*600 o*100",
				"zero": "n*600 o*100 0*300",
			},
		},
		{
			name: "Truncate shorter",
			workload: func(t *testing.T, fsys *FS) {
				f := open(t, fsys, "/d/f", os.O_RDWR)
				must(t, f.Truncate(300))
			},
			// The current content is a prefix of the durable one.
			want: map[string]string{"keep": "o*300", "drop": "o*1000", "cut": "o*300", "zero": "o*300"},
		},
		{
			name: "Truncate Sync write Sync",
			workload: func(t *testing.T, fsys *FS) {
				f := open(t, fsys, "/d/f", os.O_RDWR)
				must(t, f.Truncate(0))
				must(t, f.Sync())
				write(t, f, repeat('n', 600))
				must(t, f.Sync())
			},
			want: map[string]string{"keep": "n*600", "drop": "n*600", "cut": "n*600", "zero": "n*600"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := New()
			must(t, fsys.WriteFile("/d/f", repeat('o', 1000), 0o644))
			tc.workload(t, fsys)
			fsys.CrashNow()
			want := map[string]map[string]string{}
			for _, name := range imageNames {
				mode, _, _ := strings.Cut(name, "/")
				want[name] = map[string]string{"/d/f": tc.want[mode]}
			}
			if diff := cmp.Diff(want, imageFiles(t, fsys)); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNamespace checks which names survive under each namespace mode. In
// every case the data is synced, so all data modes agree.
func TestNamespace(t *testing.T) {
	for _, tc := range []struct {
		name      string
		workload  func(t *testing.T, fsys *FS)
		keepNames map[string]string
		dropNames map[string]string
	}{
		{
			name: "rename without SyncDir",
			workload: func(t *testing.T, fsys *FS) {
				f := open(t, fsys, "/d/tmp", os.O_WRONLY|os.O_CREATE|os.O_EXCL)
				write(t, f, []byte("new"))
				must(t, f.Sync())
				must(t, f.Close())
				must(t, fsys.Rename("/d/tmp", "/d/f"))
			},
			keepNames: map[string]string{"/d/f": "n*1 e*1 w*1"},
			dropNames: map[string]string{"/d/f": "o*3"},
		},
		{
			name: "rename with SyncDir",
			workload: func(t *testing.T, fsys *FS) {
				f := open(t, fsys, "/d/tmp", os.O_WRONLY|os.O_CREATE|os.O_EXCL)
				write(t, f, []byte("new"))
				must(t, f.Sync())
				must(t, f.Close())
				must(t, fsys.Rename("/d/tmp", "/d/f"))
				must(t, fsys.SyncDir("/d"))
			},
			keepNames: map[string]string{"/d/f": "n*1 e*1 w*1"},
			dropNames: map[string]string{"/d/f": "n*1 e*1 w*1"},
		},
		{
			name: "new file without SyncDir",
			workload: func(t *testing.T, fsys *FS) {
				f := open(t, fsys, "/d/g", os.O_WRONLY|os.O_CREATE)
				write(t, f, []byte("g"))
				must(t, f.Sync())
			},
			keepNames: map[string]string{"/d/f": "o*3", "/d/g": "g*1"},
			dropNames: map[string]string{"/d/f": "o*3"},
		},
		{
			name: "new file with SyncDir of another directory",
			workload: func(t *testing.T, fsys *FS) {
				f := open(t, fsys, "/d/g", os.O_WRONLY|os.O_CREATE)
				write(t, f, []byte("g"))
				must(t, f.Sync())
				must(t, fsys.SyncDir("/"))
			},
			keepNames: map[string]string{"/d/f": "o*3", "/d/g": "g*1"},
			dropNames: map[string]string{"/d/f": "o*3"},
		},
		{
			name: "remove without SyncDir",
			workload: func(t *testing.T, fsys *FS) {
				must(t, fsys.Remove("/d/f"))
			},
			keepNames: map[string]string{},
			dropNames: map[string]string{"/d/f": "o*3"},
		},
		{
			name: "RemoveAll with SyncDir",
			workload: func(t *testing.T, fsys *FS) {
				must(t, fsys.RemoveAll("/d"))
				must(t, fsys.SyncDir("/"))
			},
			keepNames: map[string]string{},
			dropNames: map[string]string{},
		},
		{
			name: "RemoveAll without SyncDir",
			workload: func(t *testing.T, fsys *FS) {
				must(t, fsys.RemoveAll("/d"))
			},
			keepNames: map[string]string{},
			dropNames: map[string]string{"/d/f": "o*3"},
		},
		{
			name: "MkdirAll, SyncDir of the file's directory only",
			workload: func(t *testing.T, fsys *FS) {
				must(t, fsys.MkdirAll("/a/b", 0o755))
				f := open(t, fsys, "/a/b/f", os.O_WRONLY|os.O_CREATE)
				write(t, f, []byte("x"))
				must(t, f.Sync())
				must(t, fsys.SyncDir("/a/b"))
			},
			keepNames: map[string]string{"/d/f": "o*3", "/a/b/f": "x*1"},
			dropNames: map[string]string{"/d/f": "o*3"},
		},
		{
			name: "MkdirAll, SyncDir of every parent",
			workload: func(t *testing.T, fsys *FS) {
				must(t, fsys.MkdirAll("/a/b", 0o755))
				f := open(t, fsys, "/a/b/f", os.O_WRONLY|os.O_CREATE)
				write(t, f, []byte("x"))
				must(t, f.Sync())
				must(t, fsys.SyncDir("/a/b"))
				must(t, fsys.SyncDir("/a"))
				must(t, fsys.SyncDir("/"))
			},
			keepNames: map[string]string{"/d/f": "o*3", "/a/b/f": "x*1"},
			dropNames: map[string]string{"/d/f": "o*3", "/a/b/f": "x*1"},
		},
		{
			name: "directory rename keeps its durable entries",
			workload: func(t *testing.T, fsys *FS) {
				must(t, fsys.Rename("/d", "/e"))
				must(t, fsys.SyncDir("/"))
			},
			keepNames: map[string]string{"/e/f": "o*3"},
			dropNames: map[string]string{"/e/f": "o*3"},
		},
		{
			name: "file moved between directories, only the target synced",
			workload: func(t *testing.T, fsys *FS) {
				must(t, fsys.MkdirAll("/e", 0o755))
				must(t, fsys.SyncDir("/"))
				must(t, fsys.Rename("/d/f", "/e/f"))
				must(t, fsys.SyncDir("/e"))
			},
			keepNames: map[string]string{"/e/f": "o*3"},
			// Both names survive, as a real file system may leave them.
			dropNames: map[string]string{"/d/f": "o*3", "/e/f": "o*3"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := New()
			must(t, fsys.WriteFile("/d/f", []byte("ooo"), 0o644))
			tc.workload(t, fsys)
			fsys.CrashNow()
			want := map[string]map[string]string{}
			for _, name := range imageNames {
				want[name] = tc.keepNames
				if strings.HasSuffix(name, "/dropnames") {
					want[name] = tc.dropNames
				}
			}
			if diff := cmp.Diff(want, imageFiles(t, fsys)); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDirectoryCycle makes the durable entries form a cycle, which a crash
// must survive.
func TestDirectoryCycle(t *testing.T) {
	fsys := New()
	must(t, fsys.MkdirAll("/p/q", 0o755))
	must(t, fsys.SyncDir("/"))
	must(t, fsys.SyncDir("/p"))
	must(t, fsys.Rename("/p/q", "/q"))
	must(t, fsys.SyncDir("/"))
	must(t, fsys.Rename("/p", "/q/p"))
	must(t, fsys.SyncDir("/q"))
	// Durable: / has p and q, p has q, q has p.
	fsys.CrashNow()
	for _, img := range fsys.Images() {
		var dirs []string
		img2 := img.FS()
		for _, d := range []string{"/p", "/q", "/q/p", "/p/q", "/q/p/q"} {
			if fi, err := img2.Stat(d); err == nil && fi.IsDir() {
				dirs = append(dirs, d)
			}
		}
		if len(dirs) == 0 {
			t.Errorf("%s: no directories", img.Name)
		}
	}
}

func TestHandleAfterRenameAndRemove(t *testing.T) {
	fsys := New()
	must(t, fsys.WriteFile("/f", []byte("abc"), 0o644))
	f := open(t, fsys, "/f", os.O_RDWR)
	must(t, fsys.Rename("/f", "/g"))
	if _, err := fsys.Stat("/f"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of the old name: %v, want fs.ErrNotExist", err)
	}
	write(t, f, []byte("X"))
	got, err := fsys.ReadFile("/g")
	must(t, err)
	if string(got) != "Xbc" {
		t.Errorf("/g after writing through the handle = %q, want %q", got, "Xbc")
	}

	must(t, fsys.Remove("/g"))
	write(t, f, []byte("Y"))
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	got, err = io.ReadAll(f)
	must(t, err)
	if string(got) != "XYc" {
		t.Errorf("removed file through the handle = %q, want %q", got, "XYc")
	}
	fi, err := f.Stat()
	must(t, err)
	if fi.Size() != 3 || fi.Name() != "f" {
		t.Errorf("Stat of the handle: name %q size %d, want f 3", fi.Name(), fi.Size())
	}
	if _, err := fsys.Stat("/g"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat after Remove: %v, want fs.ErrNotExist", err)
	}
	must(t, f.Close())
}

func TestErrCrashed(t *testing.T) {
	fsys := New()
	must(t, fsys.WriteFile("/d/f", []byte("abc"), 0o644))
	if fsys.Crashed() || fsys.Images() != nil {
		t.Fatal("crashed before any crash was armed")
	}
	f := open(t, fsys, "/d/f", os.O_RDWR) // not counted
	fsys.CrashAt(1)
	must(t, fsys.MkdirAll("/e", 0o755)) // op 0
	if got := fsys.Ops(); got != 1 {
		t.Fatalf("Ops() = %d, want 1", got)
	}
	if err := fsys.Rename("/d/f", "/d/g"); err != ErrCrashed {
		t.Fatalf("Rename at the crash point: %v, want ErrCrashed", err)
	}
	if !fsys.Crashed() {
		t.Fatal("Crashed() = false after the crash")
	}
	if got := fsys.Ops(); got != 1 {
		t.Errorf("Ops() after the crash = %d, want 1", got)
	}
	if got, err := fsys.ReadFile("/d/f"); err != nil || string(got) != "abc" {
		t.Errorf("ReadFile after crash = %q, %v; want the state at the crash", got, err)
	}

	ops := map[string]func() error{
		"OpenFile read-only": func() error { _, err := fsys.OpenFile("/d/f", os.O_RDONLY, 0); return err },
		"OpenFile create":    func() error { _, err := fsys.OpenFile("/x", os.O_CREATE|os.O_WRONLY, 0o644); return err },
		"Stat":               func() error { _, err := fsys.Stat("/d/f"); return err },
		"ReadDir":            func() error { _, err := fsys.ReadDir("/d"); return err },
		"Rename":             func() error { return fsys.Rename("/d/f", "/d/g") },
		"Remove":             func() error { return fsys.Remove("/d/f") },
		"RemoveAll":          func() error { return fsys.RemoveAll("/d") },
		"MkdirAll":           func() error { return fsys.MkdirAll("/y", 0o755) },
		"SyncDir":            func() error { return fsys.SyncDir("/d") },
		"WriteFile":          func() error { return fsys.WriteFile("/d/f", nil, 0o644) },
		"File.Read":          func() error { _, err := f.Read(make([]byte, 1)); return err },
		"File.Write":         func() error { _, err := f.Write([]byte("x")); return err },
		"File.Seek":          func() error { _, err := f.Seek(0, io.SeekStart); return err },
		"File.Sync":          func() error { return f.Sync() },
		"File.Truncate":      func() error { return f.Truncate(0) },
		"File.Stat":          func() error { _, err := f.Stat(); return err },
		"File.Close":         func() error { return f.Close() },
	}
	for name, op := range ops {
		if err := op(); err != ErrCrashed {
			t.Errorf("%s after crash: %v, want ErrCrashed", name, err)
		}
	}
	if got, err := fsys.ReadFile("/d/f"); err != nil || string(got) != "abc" {
		t.Errorf("ReadFile after crash = %q, %v; want it unchanged", got, err)
	}
	if got := len(fsys.Images()); got != 8 {
		t.Errorf("len(Images()) = %d, want 8", got)
	}
	// The images are those of the crash point: /e exists in keepnames.
	for _, img := range fsys.Images() {
		_, err := img.FS().Stat("/e")
		if keep := strings.HasSuffix(img.Name, "/keepnames"); keep != (err == nil) {
			t.Errorf("%s: Stat(/e) = %v", img.Name, err)
		}
	}
}

func TestZeroFS(t *testing.T) {
	var fsys FS
	must(t, fsys.MkdirAll("/d", 0o755))
	fi, err := fsys.Stat("/")
	must(t, err)
	if !fi.IsDir() {
		t.Error("the root of a zero FS is not a directory")
	}
}

func TestNoCrashWhenWorkloadEndsFirst(t *testing.T) {
	fsys := New()
	fsys.CrashAt(5)
	must(t, fsys.MkdirAll("/d", 0o755))
	if fsys.Crashed() || fsys.Images() != nil {
		t.Errorf("Crashed() = %v, Images() = %v; want false, nil", fsys.Crashed(), fsys.Images())
	}
	fsys.CrashAt(-1)
	for range 10 {
		must(t, fsys.MkdirAll("/d", 0o755))
	}
	if fsys.Crashed() {
		t.Error("crashed after CrashAt(-1)")
	}
}

func TestTornWrite(t *testing.T) {
	fsys := New()
	f := open(t, fsys, "/f", os.O_WRONLY|os.O_CREATE)
	must(t, f.Sync())
	must(t, fsys.SyncDir("/"))
	write(t, f, []byte("ab"))
	must(t, f.Sync())
	fsys.CrashAt(fsys.Ops())
	n, err := f.Write(repeat('c', 1001))
	if err != ErrCrashed || n != 0 {
		t.Fatalf("Write at the crash point = %d, %v; want 0, ErrCrashed", n, err)
	}
	want := map[string]map[string]string{}
	for _, name := range imageNames {
		mode, _, _ := strings.Cut(name, "/")
		want[name] = map[string]string{"/f": map[string]string{
			"keep": "a*1 b*1 c*500", // half of the write landed
			"drop": "a*1 b*1",
			"cut":  "a*1 b*1", // roundDown(2+250, 512) = 0, raised to 2
			"zero": "a*1 b*1 0*500",
		}[mode]}
	}
	if diff := cmp.Diff(want, imageFiles(t, fsys)); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
}

func TestImageFSIsIndependent(t *testing.T) {
	fsys := New()
	must(t, fsys.WriteFile("/d/f", []byte("durable"), 0o600))
	f := open(t, fsys, "/d/f", os.O_WRONLY|os.O_APPEND)
	write(t, f, []byte("+more"))
	fsys.CrashNow()
	img := fsys.Images()[0] // keep/keepnames

	a := img.FS()
	if a.Crashed() || a.Ops() != 0 {
		t.Fatalf("new FS: Crashed() = %v, Ops() = %d; want false, 0", a.Crashed(), a.Ops())
	}
	fi, err := a.Stat("/d/f")
	must(t, err)
	if fi.Mode() != 0o600 {
		t.Errorf("mode in image = %v, want %v", fi.Mode(), fs.FileMode(0o600))
	}
	af := open(t, a, "/d/f", os.O_WRONLY|os.O_APPEND)
	write(t, af, []byte("+a"))
	must(t, a.Remove("/d/f"))

	b := img.FS()
	got, err := b.ReadFile("/d/f")
	must(t, err)
	if string(got) != "durable+more" {
		t.Errorf("second FS from the image = %q, want %q", got, "durable+more")
	}
	got, err = fsys.ReadFile("/d/f")
	must(t, err)
	if string(got) != "durable+more" {
		t.Errorf("crashed FS = %q, want %q", got, "durable+more")
	}

	// Everything in a new FS is durable: crashing it at once leaves eight
	// identical images.
	b.CrashNow()
	for name, files := range imageFiles(t, b) {
		if diff := cmp.Diff(map[string]string{"/d/f": rle([]byte("durable+more"))}, files); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func TestErrors(t *testing.T) {
	fsys := New()
	must(t, fsys.WriteFile("/d/f", []byte("abc"), 0o644))
	closed := open(t, fsys, "/d/f", os.O_RDWR)
	must(t, closed.Close())
	rdonly := open(t, fsys, "/d/f", os.O_RDONLY)

	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"open missing", errOf(fsys.OpenFile("/d/missing", os.O_RDONLY, 0)), fs.ErrNotExist},
		{"open empty name", errOf(fsys.OpenFile("", os.O_RDONLY, 0)), fs.ErrNotExist},
		{"create in missing dir", errOf(fsys.OpenFile("/nodir/f", os.O_CREATE|os.O_WRONLY, 0o644)), fs.ErrNotExist},
		{"O_EXCL on existing", errOf(fsys.OpenFile("/d/f", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)), fs.ErrExist},
		{"O_EXCL on directory", errOf(fsys.OpenFile("/d", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)), fs.ErrExist},
		{"open under a file", errOf(fsys.OpenFile("/d/f/x", os.O_RDONLY, 0)), syscall.ENOTDIR},
		{"open directory for writing", errOf(fsys.OpenFile("/d", os.O_WRONLY, 0)), syscall.EISDIR},
		{"rename missing", fsys.Rename("/d/missing", "/d/g"), fs.ErrNotExist},
		{"rename into missing dir", fsys.Rename("/d/f", "/nodir/g"), fs.ErrNotExist},
		{"rename over directory", fsys.Rename("/d/f", "/d"), syscall.EEXIST},
		{"rename directory into itself", fsys.Rename("/d", "/d/sub"), syscall.EINVAL},
		{"remove missing", fsys.Remove("/d/missing"), fs.ErrNotExist},
		{"remove non-empty directory", fsys.Remove("/d"), syscall.ENOTEMPTY},
		{"stat missing", errOf(fsys.Stat("/d/missing")), fs.ErrNotExist},
		{"readdir missing", errOf(fsys.ReadDir("/nodir")), fs.ErrNotExist},
		{"readdir of a file", errOf(fsys.ReadDir("/d/f")), syscall.ENOTDIR},
		{"syncdir missing", fsys.SyncDir("/nodir"), fs.ErrNotExist},
		{"mkdirall over a file", fsys.MkdirAll("/d/f/g", 0o755), syscall.ENOTDIR},
		{"write read-only", errOf(rdonly.Write([]byte("x"))), syscall.EBADF},
		{"truncate read-only", rdonly.Truncate(0), syscall.EINVAL},
		{"seek negative", errOf(rdonly.Seek(-1, io.SeekStart)), syscall.EINVAL},
		{"read closed", errOf(closed.Read(make([]byte, 1))), fs.ErrClosed},
		{"write closed", errOf(closed.Write([]byte("x"))), fs.ErrClosed},
		{"sync closed", closed.Sync(), fs.ErrClosed},
		{"close closed", closed.Close(), fs.ErrClosed},
		{"readfile missing", errOf(fsys.ReadFile("/d/missing")), fs.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !errors.Is(tc.err, tc.want) {
				t.Errorf("got %v, want an error matching %v", tc.err, tc.want)
			}
		})
	}
	if got, err := fsys.ReadFile("/d/f"); err != nil || string(got) != "abc" {
		t.Errorf("failed operations changed /d/f to %q, %v", got, err)
	}
	var pe *fs.PathError
	if err := errOf(fsys.OpenFile("/d/missing", os.O_RDONLY, 0)); !errors.As(err, &pe) || pe.Op != "open" || pe.Path != "/d/missing" {
		t.Errorf("open missing: %#v, want *fs.PathError{Op: open, Path: /d/missing}", err)
	}
	if !os.IsNotExist(errOf(fsys.Stat("/nope"))) {
		t.Error("os.IsNotExist is false for a missing file")
	}
}

func errOf[T any](_ T, err error) error { return err }

func TestStatAndReadDir(t *testing.T) {
	fsys := New()
	must(t, fsys.MkdirAll("/d/sub", 0o700))
	must(t, fsys.WriteFile("/d/b", []byte("bb"), 0o600))
	must(t, fsys.WriteFile("/d/a", []byte("a"), 0o644))

	type info struct {
		Name  string
		Size  int64
		Mode  fs.FileMode
		IsDir bool
	}
	var got []info
	entries, err := fsys.ReadDir("/d")
	must(t, err)
	for _, e := range entries {
		fi, err := e.Info()
		must(t, err)
		if e.Name() != fi.Name() || e.IsDir() != fi.IsDir() || e.Type() != fi.Mode().Type() {
			t.Errorf("DirEntry %q disagrees with its FileInfo", e.Name())
		}
		got = append(got, info{fi.Name(), fi.Size(), fi.Mode(), fi.IsDir()})
	}
	want := []info{
		{"a", 1, 0o644, false},
		{"b", 2, 0o600, false},
		{"sub", 0, fs.ModeDir | 0o700, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadDir (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		path string
		want info
	}{
		{"/d/b", info{"b", 2, 0o600, false}},
		{"/d/sub/", info{"sub", 0, fs.ModeDir | 0o700, true}},
		{"/", info{"/", 0, fs.ModeDir | 0o755, true}},
		{"d/./sub/../a", info{"a", 1, 0o644, false}},
	} {
		fi, err := fsys.Stat(tc.path)
		must(t, err)
		if diff := cmp.Diff(tc.want, info{fi.Name(), fi.Size(), fi.Mode(), fi.IsDir()}); diff != "" {
			t.Errorf("Stat(%q) (-want +got):\n%s", tc.path, diff)
		}
	}
}

func TestWalk(t *testing.T) {
	fsys := New()
	must(t, fsys.MkdirAll("/empty", 0o755))
	must(t, fsys.WriteFile("/b/z", []byte("z"), 0o644))
	must(t, fsys.WriteFile("/a", []byte("a"), 0o644))
	f := open(t, fsys, "/b/y", os.O_WRONLY|os.O_CREATE) // current, not durable
	write(t, f, []byte("secret"))
	var got []string
	fsys.Walk(func(p string, data []byte) { got = append(got, p+"="+string(data)) })
	if diff := cmp.Diff([]string{"/a=a", "/b/y=secret", "/b/z=z"}, got); diff != "" {
		t.Errorf("Walk (-want +got):\n%s", diff)
	}
}

// TestOpsCounting checks which operations count.
func TestOpsCounting(t *testing.T) {
	fsys := New()
	must(t, fsys.WriteFile("/f", []byte("abc"), 0o644)) // not counted
	steps := []struct {
		name    string
		do      func() error
		counted bool
	}{
		{"MkdirAll", func() error { return fsys.MkdirAll("/d", 0o755) }, true},
		{"MkdirAll existing", func() error { return fsys.MkdirAll("/d", 0o755) }, true},
		{"OpenFile read-only", func() error { return errOf(fsys.OpenFile("/f", os.O_RDONLY, 0)) }, false},
		{"OpenFile read-write", func() error { return errOf(fsys.OpenFile("/f", os.O_RDWR, 0)) }, false},
		{"OpenFile O_CREATE", func() error { return errOf(fsys.OpenFile("/g", os.O_RDWR|os.O_CREATE, 0o644)) }, true},
		{"OpenFile O_TRUNC", func() error { return errOf(fsys.OpenFile("/g", os.O_RDWR|os.O_TRUNC, 0)) }, true},
		{"Stat", func() error { return errOf(fsys.Stat("/f")) }, false},
		{"ReadDir", func() error { return errOf(fsys.ReadDir("/")) }, false},
		{"Rename", func() error { return fsys.Rename("/g", "/h") }, true},
		{"Remove", func() error { return fsys.Remove("/h") }, true},
		{"RemoveAll missing", func() error { return fsys.RemoveAll("/nothing") }, true},
		{"SyncDir", func() error { return fsys.SyncDir("/") }, true},
	}
	for _, s := range steps {
		before := fsys.Ops()
		must(t, s.do())
		if got := fsys.Ops() - before; got != map[bool]int{false: 0, true: 1}[s.counted] {
			t.Errorf("%s: Ops() grew by %d, counted %v", s.name, got, s.counted)
		}
	}

	f := open(t, fsys, "/f", os.O_RDWR)
	fileSteps := []struct {
		name    string
		do      func() error
		counted bool
	}{
		{"Read", func() error { return errOf(f.Read(make([]byte, 1))) }, false},
		{"Seek", func() error { return errOf(f.Seek(0, io.SeekStart)) }, false},
		{"Stat", func() error { return errOf(f.Stat()) }, false},
		{"Write", func() error { return errOf(f.Write([]byte("x"))) }, true},
		{"Write empty", func() error { return errOf(f.Write(nil)) }, true},
		{"Sync", f.Sync, true},
		{"Truncate", func() error { return f.Truncate(1) }, true},
		{"Close", f.Close, false},
	}
	for _, s := range fileSteps {
		before := fsys.Ops()
		must(t, s.do())
		if got := fsys.Ops() - before; got != map[bool]int{false: 0, true: 1}[s.counted] {
			t.Errorf("File.%s: Ops() grew by %d, counted %v", s.name, got, s.counted)
		}
	}
}

// TestLikeOS runs one script of operations against the real file system and
// against an FS and compares what each step returned.
func TestLikeOS(t *testing.T) {
	type env struct {
		fsys    vfs.FS
		root    string
		handles map[string]vfs.File
	}
	p := func(e *env, rel string) string { return filepath.Join(e.root, rel) }
	outcome := func(err error) string {
		switch {
		case err == nil:
			return "ok"
		case errors.Is(err, syscall.ENOTEMPTY): // before fs.ErrExist, which it matches
			return "ENOTEMPTY"
		case errors.Is(err, fs.ErrNotExist):
			return "ErrNotExist"
		case errors.Is(err, fs.ErrExist) && !errors.Is(err, syscall.EEXIST):
			return "ErrExist"
		case errors.Is(err, fs.ErrClosed):
			return "ErrClosed"
		case err == io.EOF:
			return "EOF"
		}
		var errno syscall.Errno
		if errors.As(err, &errno) {
			if errno == syscall.EEXIST && !strings.Contains(err.Error(), "rename") {
				return "ErrExist"
			}
			return errno.Error()
		}
		return "unexpected error: " + err.Error()
	}
	openStep := func(h, rel string, flag int) func(e *env) string {
		return func(e *env) string {
			f, err := e.fsys.OpenFile(p(e, rel), flag, 0o644)
			if err == nil {
				e.handles[h] = f
			}
			return outcome(err)
		}
	}
	read := func(h string, n int) func(e *env) string {
		return func(e *env) string {
			buf := make([]byte, n)
			n, err := e.handles[h].Read(buf)
			return fmt.Sprintf("%q %s", buf[:n], outcome(err))
		}
	}
	writeStep := func(h, s string) func(e *env) string {
		return func(e *env) string {
			n, err := e.handles[h].Write([]byte(s))
			return fmt.Sprintf("%d %s", n, outcome(err))
		}
	}
	seek := func(h string, off int64, whence int) func(e *env) string {
		return func(e *env) string {
			n, err := e.handles[h].Seek(off, whence)
			return fmt.Sprintf("%d %s", n, outcome(err))
		}
	}
	content := func(rel string) func(e *env) string {
		return func(e *env) string {
			data, err := vfs.ReadFile(e.fsys, p(e, rel))
			return fmt.Sprintf("%q %s", data, outcome(err))
		}
	}
	stat := func(rel string) func(e *env) string {
		return func(e *env) string {
			fi, err := e.fsys.Stat(p(e, rel))
			if err != nil {
				return outcome(err)
			}
			size := fi.Size()
			if fi.IsDir() {
				size = -1 // directory sizes differ between file systems
			}
			return fmt.Sprintf("%s dir=%v size=%d", fi.Name(), fi.IsDir(), size)
		}
	}
	steps := []struct {
		name string
		do   func(e *env) string
	}{
		{"MkdirAll d", func(e *env) string { return outcome(e.fsys.MkdirAll(p(e, "d/sub"), 0o755)) }},
		{"create f", openStep("f", "d/f", os.O_RDWR|os.O_CREATE|os.O_EXCL)},
		{"create f again", openStep("x", "d/f", os.O_RDWR|os.O_CREATE|os.O_EXCL)},
		{"write f", writeStep("f", "hello world")},
		{"seek start", seek("f", 0, io.SeekStart)},
		{"read 5", read("f", 5)},
		{"seek current", seek("f", 1, io.SeekCurrent)},
		{"read rest", read("f", 100)},
		{"read at end", read("f", 100)},
		{"read empty buffer", read("f", 0)},
		{"seek past end", seek("f", 20, io.SeekStart)},
		{"read past end", read("f", 10)},
		{"write past end", writeStep("f", "!")},
		{"content with gap", content("d/f")},
		{"seek end", seek("f", -1, io.SeekEnd)},
		{"seek negative", seek("f", -100, io.SeekCurrent)},
		{"bad whence", seek("f", 0, 7)},
		{"truncate", func(e *env) string { return outcome(e.handles["f"].Truncate(5)) }},
		{"offset kept after truncate", seek("f", 0, io.SeekCurrent)},
		{"truncate negative", func(e *env) string { return outcome(e.handles["f"].Truncate(-1)) }},
		{"stat handle", func(e *env) string {
			fi, err := e.handles["f"].Stat()
			if err != nil {
				return outcome(err)
			}
			return fmt.Sprintf("%s %d", fi.Name(), fi.Size())
		}},
		{"open read-only", openStep("r", "d/f", os.O_RDONLY)},
		{"write read-only", writeStep("r", "x")},
		{"truncate read-only", func(e *env) string { return outcome(e.handles["r"].Truncate(0)) }},
		{"sync read-only", func(e *env) string { return outcome(e.handles["r"].Sync()) }},
		{"open write-only", openStep("w", "d/f", os.O_WRONLY)},
		{"read write-only", read("w", 1)},
		{"open append", openStep("a", "d/a", os.O_WRONLY|os.O_CREATE|os.O_APPEND)},
		{"append 1", writeStep("a", "1")},
		{"seek append", seek("a", 0, io.SeekStart)},
		{"append 2", writeStep("a", "2")},
		{"append content", content("d/a")},
		{"open O_TRUNC", openStep("t", "d/a", os.O_RDWR|os.O_TRUNC)},
		{"truncated content", content("d/a")},
		{"write truncated", writeStep("t", "12")},
		{"open missing", openStep("x", "d/missing", os.O_RDONLY)},
		{"create in missing dir", openStep("x", "nodir/f", os.O_WRONLY|os.O_CREATE)},
		{"open under file", openStep("x", "d/f/x", os.O_RDONLY)},
		{"open dir for writing", openStep("x", "d", os.O_WRONLY)},
		{"open dir with O_CREATE", openStep("x", "d", os.O_RDWR|os.O_CREATE)},
		{"open dir", openStep("dir", "d", os.O_RDONLY)},
		{"read dir handle", read("dir", 10)},
		{"sync dir handle", func(e *env) string { return outcome(e.handles["dir"].Sync()) }},
		{"stat dir handle", func(e *env) string {
			fi, err := e.handles["dir"].Stat()
			if err != nil {
				return outcome(err)
			}
			return fmt.Sprintf("%s %v", fi.Name(), fi.IsDir())
		}},
		{"rename missing", func(e *env) string { return outcome(e.fsys.Rename(p(e, "d/missing"), p(e, "d/g"))) }},
		{"rename to missing dir", func(e *env) string { return outcome(e.fsys.Rename(p(e, "d/a"), p(e, "nodir/a"))) }},
		{"rename file over dir", func(e *env) string { return outcome(e.fsys.Rename(p(e, "d/a"), p(e, "d/sub"))) }},
		{"rename dir over file", func(e *env) string { return outcome(e.fsys.Rename(p(e, "d/sub"), p(e, "d/a"))) }},
		{"rename dir into itself", func(e *env) string { return outcome(e.fsys.Rename(p(e, "d"), p(e, "d/sub/d"))) }},
		{"rename to itself", func(e *env) string { return outcome(e.fsys.Rename(p(e, "d/a"), p(e, "d/a"))) }},
		{"rename over file", func(e *env) string { return outcome(e.fsys.Rename(p(e, "d/a"), p(e, "d/f"))) }},
		{"renamed content", content("d/f")},
		{"old name gone", stat("d/a")},
		{"handle after rename", func(e *env) string {
			e.handles["f"].Seek(0, io.SeekStart)
			data, err := io.ReadAll(e.handles["f"])
			return fmt.Sprintf("%q %s", data, outcome(err))
		}},
		{"remove non-empty dir", func(e *env) string { return outcome(e.fsys.Remove(p(e, "d"))) }},
		{"remove missing", func(e *env) string { return outcome(e.fsys.Remove(p(e, "d/missing"))) }},
		{"remove empty dir", func(e *env) string { return outcome(e.fsys.Remove(p(e, "d/sub"))) }},
		{"RemoveAll missing", func(e *env) string { return outcome(e.fsys.RemoveAll(p(e, "d/missing/x"))) }},
		{"MkdirAll over file", func(e *env) string { return outcome(e.fsys.MkdirAll(p(e, "d/f/g"), 0o755)) }},
		{"MkdirAll existing", func(e *env) string { return outcome(e.fsys.MkdirAll(p(e, "d"), 0o755)) }},
		{"stat file", stat("d/f")},
		{"stat dir", stat("d")},
		{"stat missing", stat("d/nope")},
		{"stat under file", stat("d/f/x")},
		{"ReadDir", func(e *env) string {
			entries, err := e.fsys.ReadDir(p(e, "d"))
			var names []string
			for _, en := range entries {
				names = append(names, fmt.Sprintf("%s:%v", en.Name(), en.IsDir()))
			}
			return fmt.Sprintf("%v %s", names, outcome(err))
		}},
		{"ReadDir of file", func(e *env) string { return outcome(errOf(e.fsys.ReadDir(p(e, "d/f")))) }},
		{"ReadDir missing", func(e *env) string { return outcome(errOf(e.fsys.ReadDir(p(e, "nodir")))) }},
		{"SyncDir", func(e *env) string { return outcome(e.fsys.SyncDir(p(e, "d"))) }},
		{"SyncDir missing", func(e *env) string { return outcome(e.fsys.SyncDir(p(e, "nodir"))) }},
		{"close", func(e *env) string { return outcome(e.handles["f"].Close()) }},
		{"close again", func(e *env) string { return outcome(e.handles["f"].Close()) }},
		{"read closed", read("f", 1)},
		{"write closed", writeStep("f", "x")},
		{"seek closed", seek("f", 0, io.SeekStart)},
		{"sync closed", func(e *env) string { return outcome(e.handles["f"].Sync()) }},
		{"stat closed", func(e *env) string { return outcome(errOf(e.handles["f"].Stat())) }},
		{"RemoveAll", func(e *env) string { return outcome(e.fsys.RemoveAll(p(e, "d"))) }},
		{"stat removed", stat("d")},
	}
	run := func(e *env) []string {
		var log []string
		for _, s := range steps {
			log = append(log, s.name+": "+s.do(e))
		}
		for _, f := range e.handles {
			f.Close()
		}
		return log
	}
	want := run(&env{fsys: vfs.OS, root: t.TempDir(), handles: map[string]vfs.File{}})
	got := run(&env{fsys: New(), root: "/", handles: map[string]vfs.File{}})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-os +crashfs):\n%s", diff)
	}
}

// atomicMatrix runs vfs.WriteFileAtomic of newData over /d/f, crashing at
// every operation in turn and once after the last, and calls check with the
// content of /d/f (nil if missing) in every image.
func atomicMatrix(t *testing.T, old, newData []byte, sync bool, check func(crashAt int, image string, got []byte)) {
	t.Helper()
	setup := func() *FS {
		fsys := New()
		must(t, fsys.WriteFile("/d/other", []byte("x"), 0o644)) // /d exists durably
		if old != nil {
			must(t, fsys.WriteFile("/d/f", old, 0o644))
		}
		return fsys
	}
	fsys := setup()
	must(t, vfs.WriteFileAtomic(fsys, "/d/f", newData, 0o644, sync))
	total := fsys.Ops()
	for n := 0; n <= total; n++ {
		fsys := setup()
		if n < total {
			fsys.CrashAt(n)
			if err := vfs.WriteFileAtomic(fsys, "/d/f", newData, 0o644, sync); err != ErrCrashed {
				t.Fatalf("crash at %d: WriteFileAtomic returned %v, want ErrCrashed", n, err)
			}
		} else {
			must(t, vfs.WriteFileAtomic(fsys, "/d/f", newData, 0o644, sync))
			fsys.CrashNow()
		}
		for _, img := range fsys.Images() {
			got, err := img.FS().ReadFile("/d/f")
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("crash at %d, %s: %v", n, img.Name, err)
			}
			check(n, img.Name, got)
		}
	}
}

// TestWriteFileAtomicCrashMatrix validates the model against the atomic
// write recipe. With sync, the temporary file's data is durable before the
// rename, so whichever inode the name points to in an image (the old one
// under dropnames before the SyncDir, the new one otherwise) has the same
// current and durable content and every data mode reproduces it whole; and
// the old name is durable, so it is never missing.
func TestWriteFileAtomicCrashMatrix(t *testing.T) {
	old := repeat('o', 1500)
	newData := repeat('n', 2600)
	for _, tc := range []struct {
		name string
		old  []byte
	}{
		{"replace", old},
		{"create", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[string]bool{}
			atomicMatrix(t, tc.old, newData, true, func(n int, image string, got []byte) {
				switch {
				case bytes.Equal(got, newData):
					seen["new"] = true
				case tc.old != nil && bytes.Equal(got, tc.old):
					seen["old"] = true
				case tc.old == nil && got == nil:
					seen["missing"] = true
				default:
					t.Errorf("crash at %d, %s: /d/f = %s, want the old or the new content whole", n, image, rle(got))
				}
			})
			// Both outcomes must be reachable, or the matrix proves nothing.
			want := map[string]bool{"new": true, "old": true}
			if tc.old == nil {
				want = map[string]bool{"new": true, "missing": true}
			}
			if diff := cmp.Diff(want, seen); diff != "" {
				t.Errorf("outcomes seen (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteFileAtomicWithoutSync shows that the model catches the classic
// bug: without the file sync, the rename can reach the disk before the data,
// leaving an empty or partial file under the name.
func TestWriteFileAtomicWithoutSync(t *testing.T) {
	old := repeat('o', 1500)
	newData := repeat('n', 2600)
	torn := false
	atomicMatrix(t, old, newData, false, func(n int, image string, got []byte) {
		if !bytes.Equal(got, old) && !bytes.Equal(got, newData) {
			torn = true
		}
	})
	if !torn {
		t.Error("no image tore the unsynced atomic write")
	}
}

func TestConcurrentUse(t *testing.T) {
	fsys := New()
	must(t, fsys.MkdirAll("/d", 0o755))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			name := fmt.Sprintf("/d/f%d", i)
			f, err := fsys.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				t.Error(err)
				return
			}
			for range 50 {
				f.Write([]byte("x"))
				f.Sync()
				fsys.Stat(name)
				fsys.ReadDir("/d")
				fsys.SyncDir("/d")
			}
			f.Close()
		})
	}
	wg.Go(func() {
		for range 50 {
			fsys.Walk(func(string, []byte) {})
			fsys.Ops()
		}
	})
	wg.Wait()
	fsys.Walk(func(p string, data []byte) {
		if len(data) != 50 {
			t.Errorf("%s has %d bytes, want 50", p, len(data))
		}
	})
}
