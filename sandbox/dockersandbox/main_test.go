package dockersandbox_test

import (
	"os"
	"testing"
)

var stateRootDir string

func stateRoot() (string, error) { return stateRootDir, nil }

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dockersandbox-state-")
	if err != nil {
		panic(err)
	}
	stateRootDir = dir
	code := m.Run()
	if shared.eng != nil {
		shared.eng.Close()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}
