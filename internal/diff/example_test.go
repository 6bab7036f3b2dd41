package diff_test

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/paddockdev/paddock/internal/diff"
)

func ExampleUnified() {
	a := []byte("package main\n// main greets.\nfunc main() {\n\tprintln(\"hello\")\n}\n")
	b := []byte("package main\n// main greets.\nfunc main() {\n\tprintln(\"hello, world\")\n}")
	// A caller writes the file header; Unified writes the hunks.
	fmt.Print("diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n")
	st, err := diff.Unified(os.Stdout, a, b, diff.DefaultContext)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d added, %d deleted\n", st.Added, st.Deleted)
	// Output:
	// diff --git a/main.go b/main.go
	// --- a/main.go
	// +++ b/main.go
	// @@ -1,5 +1,5 @@
	//  package main
	//  // main greets.
	//  func main() {
	// -	println("hello")
	// -}
	// +	println("hello, world")
	// +}
	// \ No newline at end of file
	// 2 added, 2 deleted
}

func ExampleIsBinary() {
	fmt.Println(diff.IsBinary([]byte("text\r\n")), diff.IsBinary([]byte("\x89PNG\r\n\x1a\n\x00\x00")))
	// Output: false true
}

func ExampleBinaryPatch() {
	old, new := []byte("\x00\x01\x02"), []byte("\x00\x01\x02\x03")
	// git apply needs both full object ids in the index line.
	fmt.Printf("diff --git a/f.bin b/f.bin\nindex %s..%s 100644\n", diff.BlobID(old), diff.BlobID(new))
	var body bytes.Buffer
	if err := diff.BinaryPatch(&body, old, new); err != nil {
		log.Fatal(err)
	}
	fmt.Print(body.String())
	// Output:
	// diff --git a/f.bin b/f.bin
	// index 8352675d67aed6625ece79af41c27fdb4ee2e867..eaf36c1daccfdf325514461cd1a2ffbc139b5464 100644
	// GIT binary patch
	// literal 4
	// Pc${KjWMT#c0096001f~L
	//
	// literal 3
	// Oc${KjWC8>L0RR602LJ>B
	//
}

func ExampleSimilarity() {
	a := []byte(strings.Repeat("a line that stays\n", 6) + "old ending\n")
	b := []byte(strings.Repeat("a line that stays\n", 6) + "new ending\n")
	s := diff.Similarity(a, b)
	fmt.Println(s, s >= 50) // git's default rename threshold is 50%
	// Output: 90 true
}

func ExampleMerge3() {
	base := []byte("one\ntwo\nthree\nfour\nfive\n")
	ours := []byte("ONE\ntwo\nthree\nfour\nfive\n")
	theirs := []byte("one\ntwo\nthree\nfour\nFIVE\n")
	merged, conflicts := diff.Merge3(base, ours, theirs)
	fmt.Printf("%q %d\n", merged, len(conflicts))

	theirs = []byte("1\ntwo\nthree\nfour\nfive\n")
	merged, conflicts = diff.Merge3(base, ours, theirs)
	for _, c := range conflicts {
		fmt.Printf("%v lines %d-%d: base %q, ours %q, theirs %q\n", merged == nil, c.BaseStart, c.BaseEnd, c.Base, c.Ours, c.Theirs)
	}
	// Output:
	// "ONE\ntwo\nthree\nfour\nFIVE\n" 0
	// true lines 0-1: base "one\n", ours "ONE\n", theirs "1\n"
}

func ExampleBlobID() {
	fmt.Println(diff.BlobID([]byte("hello\n"))) // as `echo hello | git hash-object --stdin`
	fmt.Println(diff.BlobID(nil))               // the empty blob
	// Output:
	// ce013625030ba8dba906f756967f9e9ca394464a
	// e69de29bb2d1d6434b8b29ae775ad8c2e48c5391
}
