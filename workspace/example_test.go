package workspace_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/paddockdev/paddock/workspace"
)

func ExampleWorkspaceID() {
	fmt.Println(workspace.WorkspaceID("main:prod"))
	fmt.Println(workspace.WorkspaceID("  My Project "))
	fmt.Println(workspace.WorkspaceID(""))
	// Output:
	// main-prod
	// my-project
	// default
}

func ExampleDirName() {
	for _, key := range []string{"user-123", "a-b", "a/b", "User-123"} {
		name, err := workspace.DirName(key)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-9s -> %s\n", key, name)
	}
	// Output:
	// user-123  -> user-123
	// a-b       -> a-b
	// a/b       -> a-b~yfgn3qbt6zfz
	// User-123  -> user-123~t7ie5zy4itrb
}

func ExampleNewPaths() {
	paths, err := workspace.NewPaths("/home/alice/project", &workspace.PathsOptions{
		StateRoot:     "/home/alice/.paddock",
		WorkspaceName: "main:prod",
	})
	if err != nil {
		log.Fatal(err)
	}
	dir, err := paths.InstanceDir("user-123")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(paths.WorkspaceID)
	fmt.Println(dir)
	// Output:
	// main-prod
	// /home/alice/.paddock/workspaces/main-prod/instances/user-123
}

// tempPaths returns Paths in a new temporary directory and a func to remove
// it.
func tempPaths() (workspace.Paths, func()) {
	tmp, err := os.MkdirTemp("", "paddock-example-")
	if err != nil {
		log.Fatal(err)
	}
	paths, err := workspace.NewPaths(filepath.Join(tmp, "project"), &workspace.PathsOptions{StateRoot: filepath.Join(tmp, "state")})
	if err != nil {
		log.Fatal(err)
	}
	return paths, func() { os.RemoveAll(tmp) }
}

func userMessage(id, text string) workspace.Message {
	data, _ := json.Marshal(map[string]string{"role": "user", "content": text})
	return workspace.Message{ID: id, Data: data, Source: workspace.Source{Type: "user"}}
}

func ExampleStore_Open() {
	ctx := context.Background()
	paths, cleanup := tempPaths()
	defer cleanup()
	store, err := workspace.NewStore(paths, nil)
	if err != nil {
		log.Fatal(err)
	}
	inst, err := store.Open(ctx, "user:alice", &workspace.OpenOptions{AgentName: "coder"})
	if err != nil {
		log.Fatal(err)
	}
	// The instance is locked until Close.
	if _, err := store.Open(ctx, "user:alice", nil); errors.Is(err, workspace.ErrLocked) {
		fmt.Println("second open: locked")
	}

	turn, err := inst.BeginTurn(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if err := turn.Append(ctx, workspace.Append(userMessage("m1", "Fix the bug"))); err != nil {
		log.Fatal(err)
	}
	if err := turn.EndStep(ctx); err != nil { // synced: survives a power loss
		log.Fatal(err)
	}
	if err := turn.Commit(ctx); err != nil { // folded into base.jsonl
		log.Fatal(err)
	}
	inst.Close()

	inst, err = store.Open(ctx, "user:alice", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer inst.Close()
	fmt.Println(len(inst.Messages()), "message, clean:", inst.Recovery().Clean())
	// Output:
	// second open: locked
	// 1 message, clean: true
}

func ExampleInstance_ResumeTurn() {
	ctx := context.Background()
	paths, cleanup := tempPaths()
	defer cleanup()
	store, err := workspace.NewStore(paths, nil)
	if err != nil {
		log.Fatal(err)
	}
	inst, err := store.Open(ctx, "k", nil)
	if err != nil {
		log.Fatal(err)
	}
	turn, err := inst.BeginTurn(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if err := turn.Append(ctx, workspace.Append(userMessage("m1", "hello"))); err != nil {
		log.Fatal(err)
	}
	inst.Close() // as if the process died mid-turn

	inst, err = store.Open(ctx, "k", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer inst.Close()
	rec := inst.Recovery()
	fmt.Println("crashed:", rec.Crashed, "pending events:", len(rec.Pending.Events), "committed:", len(inst.Messages()))
	turn, err = inst.ResumeTurn(ctx) // or inst.DiscardPendingTurn(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if err := turn.Commit(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("committed after resume:", len(inst.Messages()))
	// Output:
	// crashed: true pending events: 1 committed: 0
	// committed after resume: 1
}

func ExampleTurn_SetExtension() {
	ctx := context.Background()
	paths, cleanup := tempPaths()
	defer cleanup()
	store, err := workspace.NewStore(paths, nil)
	if err != nil {
		log.Fatal(err)
	}
	inst, err := store.Open(ctx, "k", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer inst.Close()
	turn, err := inst.BeginTurn(ctx)
	if err != nil {
		log.Fatal(err)
	}
	type compaction struct{ ProcessedSteps int }
	if err := turn.SetExtension("compaction", compaction{42}); err != nil {
		log.Fatal(err)
	}
	if err := turn.SetExtension("broken", func() {}); errors.Is(err, workspace.ErrInvalidExtensionState) {
		fmt.Println("a func is not state")
	}
	if err := turn.Commit(ctx); err != nil { // written with the turn's messages
		log.Fatal(err)
	}
	var got compaction
	if _, err := inst.Extension("compaction", &got); err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.ProcessedSteps)
	// Output:
	// a func is not state
	// 42
}

func ExampleSecret() {
	key := workspace.NewSecret("sk-live-0123456789")
	fmt.Println(key)
	fmt.Printf("%#v\n", key)
	b, _ := json.Marshal(map[string]any{"apiKey": key})
	fmt.Println(string(b))
	// Output:
	// [REDACTED]
	// [REDACTED]
	// {"apiKey":"[REDACTED]"}
}

func ExampleMasker() {
	var m workspace.Masker
	m.Add("sk-live-0123456789")
	fmt.Println(m.Mask("curl -H 'Authorization: Bearer sk-live-0123456789'"))
	fmt.Println(m.Mask("https://api.example/?key=c2stbGl2ZS0wMTIzNDU2Nzg5"))
	// Output:
	// curl -H 'Authorization: Bearer [REDACTED]'
	// https://api.example/?key=[REDACTED]
}

func ExampleOpenSecrets() {
	paths, cleanup := tempPaths()
	defer cleanup()
	secrets, err := workspace.OpenSecrets(paths, nil) // key: $PADDOCK_SECRET_KEY or a new 0600 key file
	if err != nil {
		log.Fatal(err)
	}
	if err := secrets.Set("github", workspace.NewSecret("ghp_example_token_value")); err != nil {
		log.Fatal(err)
	}
	token, err := secrets.Get("github")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(token, len(token.Reveal()))
	// Masks every stored secret in the runtime and audit logs.
	_, err = workspace.NewStore(paths, &workspace.StoreOptions{Masker: secrets.Masker()})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// [REDACTED] 23
}

func ExampleStore_Delete() {
	ctx := context.Background()
	paths, cleanup := tempPaths()
	defer cleanup()
	store, err := workspace.NewStore(paths, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, key := range []string{"user:bob", "user:alice"} {
		inst, err := store.Open(ctx, key, &workspace.OpenOptions{AgentName: "coder"})
		if err != nil {
			log.Fatal(err)
		}
		inst.Close()
	}
	// Moved to the trash, recorded in the audit log, then removed.
	if err := store.Delete(ctx, "user:bob"); err != nil {
		log.Fatal(err)
	}
	infos, err := store.List(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, info := range infos {
		fmt.Println(info.Key, info.Metadata.AgentName, info.Metadata.Status)
	}
	// Output:
	// user:alice coder idle
}

func ExampleInstance_Emit() {
	ctx := context.Background()
	paths, cleanup := tempPaths()
	defer cleanup()
	var masker workspace.Masker
	masker.Add("sk-live-0123456789")
	store, err := workspace.NewStore(paths, &workspace.StoreOptions{Masker: &masker})
	if err != nil {
		log.Fatal(err)
	}
	inst, err := store.Open(ctx, "k", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer inst.Close()
	err = inst.Emit(ctx, workspace.RuntimeEvent{Type: "tool.called", ToolName: "bash",
		Data: map[string]any{"command": "deploy --token sk-live-0123456789"}})
	if err != nil {
		log.Fatal(err)
	}
	logged, err := os.ReadFile(filepath.Join(inst.Dir(), "messages", "runtime-events.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(bytes.Contains(logged, []byte("deploy --token [REDACTED]")))
	// Output:
	// true
}
