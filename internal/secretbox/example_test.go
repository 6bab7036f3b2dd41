package secretbox_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/paddockdev/paddock/internal/secretbox"
)

func ExampleSeal() {
	// In real use the key comes from LoadKeyFile or an environment variable.
	k, err := secretbox.ParseKey("q7QHkRcdKLFdUhCIaFNX4MUwkvpEGIFXx7Dg8a0pOE8=")
	if err != nil {
		log.Fatal(err)
	}
	s, err := secretbox.Seal(k, "github/token", []byte("ghp_example"))
	if err != nil {
		log.Fatal(err)
	}

	v, err := secretbox.Open(k, "github/token", s)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", v)

	// The value is bound to its name.
	_, err = secretbox.Open(k, "gitlab/token", s)
	fmt.Println(errors.Is(err, secretbox.ErrDecrypt))
	// Output:
	// ghp_example
	// true
}

func ExampleParseKey() {
	_, err := secretbox.ParseKey("c2hvcnQga2V5") // "short key"
	fmt.Println(err)
	// Output:
	// secretbox: invalid key: 9 bytes after base64 decoding, want 32
}

func ExampleLoadKeyFile() {
	dir, err := os.MkdirTemp("", "paddock")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "key")

	k1, err := secretbox.LoadKeyFile(path, true) // creates the file
	if err != nil {
		log.Fatal(err)
	}
	k2, err := secretbox.LoadKeyFile(path, false) // reads it back
	if err != nil {
		log.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(k1 == k2, fi.Mode())
	fmt.Println(k1) // never prints the key
	// Output:
	// true -rw-------
	// secretbox.Key([REDACTED])
}

func ExampleWriteFile() {
	dir, err := os.MkdirTemp("", "paddock")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "secrets.json")
	k, err := secretbox.LoadKeyFile(filepath.Join(dir, "key"), true)
	if err != nil {
		log.Fatal(err)
	}

	f, err := secretbox.ReadFile(path) // empty: the file does not exist yet
	if err != nil {
		log.Fatal(err)
	}
	if f.Secrets["github/token"], err = secretbox.Seal(k, "github/token", []byte("ghp_example")); err != nil {
		log.Fatal(err)
	}
	if err := secretbox.WriteFile(path, f); err != nil {
		log.Fatal(err)
	}

	f, err = secretbox.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	v, err := secretbox.Open(k, "github/token", f.Secrets["github/token"])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %d %s\n", f.Schema, f.Version, v)
	// Output:
	// paddock.secrets 1 ghp_example
}
