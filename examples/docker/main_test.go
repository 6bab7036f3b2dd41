package main

import (
	"context"
	"strings"
	"testing"

	"github.com/paddockdev/paddock/internal/testenv"
	"github.com/paddockdev/paddock/sandbox/dockersandbox"
)

func TestDockerExample(t *testing.T) {
	testenv.Need(t, "docker", dockersandbox.Probe(context.Background()))
	var out strings.Builder
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	name := dockersandbox.ContainerName("example-worker")
	for _, want := range []string{
		"image: paddock-sandbox-test\n",
		"container: " + name + "\n",
		"exec: /workspace\nroot is read-only\nlo\n",
		"read back on the host: hello\n",
		"runaway: timed out\n",
		"sleep 600 processes left in the container: 0\n",
		"list: " + name + " key=example-worker state=running\n",
		"pruned: " + name + " (idle)\n",
		"containers left: 0\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
