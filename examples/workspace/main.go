// Command workspace shows the workspace store on its own. It needs no
// Docker and no network: it creates a project and a state root in a
// temporary directory,
// runs two turns of an agent conversation through the workspace store,
// keeps an API key in the encrypted secret store, and shows that the key is
// masked in the logs and that everything survives a reopen.
//
//	go run ./examples/workspace
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/paddockdev/paddock/workspace"
)

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(w io.Writer) error {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "paddock-workspace-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	project := filepath.Join(tmp, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		return err
	}

	// 1. Two roots: the user's project, and a state root outside it.
	paths, err := workspace.NewPaths(project, &workspace.PathsOptions{
		StateRoot:     filepath.Join(tmp, "state"),
		WorkspaceName: "Quickstart:Demo",
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "workspace id: %s\n", paths.WorkspaceID)

	// 2. Secrets are encrypted at rest and masked in every log.
	secrets, err := workspace.OpenSecrets(paths, nil)
	if err != nil {
		return err
	}
	apiKey := workspace.NewSecret("sk-demo-4f3c2b1a0987")
	if err := secrets.Set("model-api-key", apiKey); err != nil {
		return err
	}
	fmt.Fprintf(w, "a secret prints as %v\n", apiKey)

	store, err := workspace.NewStore(paths, &workspace.StoreOptions{Masker: secrets.Masker()})
	if err != nil {
		return err
	}

	// 3. An instance is one conversation, locked while open.
	inst, err := store.Open(ctx, "user:alice", &workspace.OpenOptions{AgentName: "coder"})
	if err != nil {
		return err
	}
	if err := turn(ctx, inst, "m1", "Fix the failing test in parser.go", "m2", "Done: the off-by-one in Next is fixed."); err != nil {
		return err
	}
	// A tool call that leaked the key into its arguments: the runtime
	// event log gets it masked.
	err = inst.Emit(ctx, workspace.RuntimeEvent{Type: "tool.called", ToolName: "bash",
		Data: map[string]any{"command": "curl -H 'Authorization: Bearer " + apiKey.Reveal() + "' https://api.example"}})
	if err != nil {
		return err
	}
	if err := turn(ctx, inst, "m3", "Now run the linter", "m4", "The linter is clean."); err != nil {
		return err
	}
	if err := inst.Close(); err != nil {
		return err
	}

	// 4. Reopen: the committed turns come back, and nothing needed recovery.
	inst, err = store.Open(ctx, "user:alice", nil)
	if err != nil {
		return err
	}
	defer inst.Close()
	fmt.Fprintf(w, "reopened %q: clean=%v\n", inst.Key(), inst.Recovery().Clean())
	for _, m := range inst.Messages() {
		var data struct{ Role, Content string }
		if err := json.Unmarshal(m.Data, &data); err != nil {
			return err
		}
		fmt.Fprintf(w, "  %s %-10s %s\n", m.ID, data.Role+":", data.Content)
	}
	var notes struct{ Turns int }
	if _, err := inst.Extension("notes", &notes); err != nil {
		return err
	}
	fmt.Fprintf(w, "extension state: %d turns\n", notes.Turns)

	log, err := os.ReadFile(filepath.Join(inst.Dir(), "messages", "runtime-events.jsonl"))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "runtime log masks the key: %v\n", !strings.Contains(string(log), apiKey.Reveal()) && strings.Contains(string(log), workspace.Redacted))
	return nil
}

// turn runs one turn: the user's message and the assistant's answer, each
// step synced, then the fold into the base log.
func turn(ctx context.Context, inst *workspace.Instance, userID, user, assistantID, assistant string) error {
	t, err := inst.BeginTurn(ctx)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	err = t.Append(ctx,
		workspace.Append(workspace.Message{ID: userID, Data: chat("user", user), CreatedAt: now, Source: workspace.Source{Type: "user"}}),
		workspace.Append(workspace.Message{ID: assistantID, Data: chat("assistant", assistant), CreatedAt: now, Source: workspace.Source{Type: "assistant"}}),
	)
	if err != nil {
		return err
	}
	if err := t.EndStep(ctx); err != nil {
		return err
	}
	var notes struct{ Turns int }
	if _, err := t.Extension("notes", &notes); err != nil {
		return err
	}
	notes.Turns++
	if err := t.SetExtension("notes", notes); err != nil {
		return err
	}
	return t.Commit(ctx)
}

func chat(role, content string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"role": role, "content": content})
	return b
}
