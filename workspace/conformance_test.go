package workspace_test

import (
	"testing"

	"github.com/paddockdev/paddock/workspace"
	"github.com/paddockdev/paddock/workspace/workspacetest"
)

// harness runs the conformance suite on real directories.
type harness struct {
	durability workspace.Durability
	paths      map[workspacetest.Store]workspace.Paths // for Restart
}

func (h *harness) NewStore(t *testing.T) workspacetest.Store {
	paths, err := workspace.NewPaths(t.TempDir(), &workspace.PathsOptions{StateRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return h.open(t, paths)
}

func (h *harness) Restart(t *testing.T, s workspacetest.Store) workspacetest.Store {
	return h.open(t, h.paths[s])
}

func (h *harness) open(t *testing.T, paths workspace.Paths) workspacetest.Store {
	s, err := workspace.NewStore(paths, &workspace.StoreOptions{Durability: h.durability})
	if err != nil {
		t.Fatal(err)
	}
	ws := workspacetest.FromStore(s)
	h.paths[ws] = paths
	return ws
}

func TestConformance(t *testing.T) {
	for _, d := range []workspace.Durability{workspace.DurabilityStep, workspace.DurabilityTurn, workspace.DurabilityEvent, workspace.DurabilityNone} {
		t.Run(d.String(), func(t *testing.T) {
			workspacetest.Run(t, &harness{durability: d, paths: map[workspacetest.Store]workspace.Paths{}})
		})
	}
}
