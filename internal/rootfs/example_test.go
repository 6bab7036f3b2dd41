package rootfs_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/paddockdev/paddock/internal/rootfs"
)

func Example() {
	dir, err := os.MkdirTemp("", "work")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	f, err := rootfs.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	if err := f.WriteFile("src/main.go", []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	if _, err := f.Edit("src/main.go", "func main() {}", "func main() { println(1) }"); err != nil {
		log.Fatal(err)
	}
	data, err := f.ReadFile("src/main.go", 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(data))

	_, err = f.ReadFile("../../etc/passwd", 0)
	fmt.Println(errors.Is(err, rootfs.ErrPathEscape), err)
	// Output:
	// package main
	//
	// func main() { println(1) }
	// true read ../../etc/passwd: sandbox: path escapes its root
}

func ExampleFS_Edit() {
	dir, err := os.MkdirTemp("", "work")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	f, err := rootfs.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	if err := f.WriteFile("a.txt", []byte("x = 1\ny = 1\n"), 0); err != nil {
		log.Fatal(err)
	}

	_, err = f.Edit("a.txt", "= 1", "= 2")
	if ee, ok := errors.AsType[*rootfs.EditError](err); ok {
		fmt.Println(ee.Count, err)
	}
	// Output:
	// 2 edit a.txt: old string found 2 times; it must occur exactly once (include more surrounding text to make it unique)
}

func ExampleFS_Resolve() {
	dir, err := os.MkdirTemp("", "work")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	f, err := rootfs.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	for _, p := range []string{"", "a/../b.txt", filepath.Join(f.Dir(), "src", "x.go"), "/etc/passwd", "../x"} {
		rel, err := f.Resolve(p)
		if err != nil {
			fmt.Println(errors.Is(err, rootfs.ErrPathEscape))
			continue
		}
		fmt.Println(rel)
	}
	// Output:
	// .
	// b.txt
	// src/x.go
	// true
	// true
}
