package crashfs_test

import (
	"errors"
	"fmt"
	"log"
	"maps"
	"os"
	"slices"

	"github.com/paddockdev/paddock/internal/crashfs"
	"github.com/paddockdev/paddock/internal/vfs"
)

// A crash matrix: run the workload once to count its operations, then crash
// it at each one and look at every image.
func Example() {
	seed := func() *crashfs.FS {
		fsys := crashfs.New()
		if err := fsys.WriteFile("/data/config", []byte("old"), 0o644); err != nil {
			log.Fatal(err)
		}
		return fsys
	}
	workload := func(fsys vfs.FS) error {
		return vfs.WriteFileAtomic(fsys, "/data/config", []byte("new"), 0o644, true)
	}

	fsys := seed()
	if err := workload(fsys); err != nil {
		log.Fatal(err)
	}
	for n := range fsys.Ops() {
		fsys := seed()
		fsys.CrashAt(n)
		if err := workload(fsys); !errors.Is(err, crashfs.ErrCrashed) {
			log.Fatalf("crash at %d: %v", n, err)
		}
		seen := map[string]bool{}
		for _, img := range fsys.Images() {
			data, err := img.FS().ReadFile("/data/config")
			if err != nil {
				log.Fatal(err)
			}
			seen[string(data)] = true
		}
		fmt.Println(n, slices.Sorted(maps.Keys(seen)))
	}
	// Output:
	// 0 [old]
	// 1 [old]
	// 2 [old]
	// 3 [old]
	// 4 [old]
	// 5 [new old]
}

// Power loss after an unsynced append: the images show what the disk may
// hold.
func ExampleFS_CrashNow() {
	fsys := crashfs.New()
	if err := fsys.WriteFile("/log", []byte("synced."), 0o644); err != nil {
		log.Fatal(err)
	}
	f, err := fsys.OpenFile("/log", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := f.Write([]byte("pending")); err != nil {
		log.Fatal(err)
	}
	fsys.CrashNow()
	for _, img := range fsys.Images() {
		data, err := img.FS().ReadFile("/log")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-15s %q\n", img.Name, data)
	}
	// Output:
	// keep/keepnames  "synced.pending"
	// keep/dropnames  "synced.pending"
	// drop/keepnames  "synced."
	// drop/dropnames  "synced."
	// cut/keepnames   "synced."
	// cut/dropnames   "synced."
	// zero/keepnames  "synced.\x00\x00\x00\x00\x00\x00\x00"
	// zero/dropnames  "synced.\x00\x00\x00\x00\x00\x00\x00"
}
