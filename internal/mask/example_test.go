package mask_test

import (
	"fmt"

	"github.com/paddockdev/paddock/internal/mask"
)

func ExampleMasker() {
	var m mask.Masker
	m.Add("hunter2!")
	m.Add("abc") // shorter than mask.MinLen: ignored

	fmt.Println(m.Mask("login password=hunter2! (abc)"))
	fmt.Println(m.Mask("Authorization: Basic YWRtaW46aHVudGVyMiE=")) // admin:hunter2!
	fmt.Println(m.Mask("https://example.com/?pw=hunter2%21"))
	// Output:
	// login password=[REDACTED] (abc)
	// Authorization: Basic YWRtaW46[REDACTED]
	// https://example.com/?pw=[REDACTED]
}

func ExampleMasker_Contains() {
	var m mask.Masker
	m.Add("hunter2!")

	fmt.Println(m.Contains([]byte("log: aHVudGVyMiE=")))
	fmt.Println(m.Contains([]byte("log: [REDACTED]")))
	// Output:
	// true
	// false
}
