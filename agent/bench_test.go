package agent_test

// Each benchmark runs its baseline first, as a sub-benchmark; the measured
// sub-benchmark reports its time per op divided by the baseline's as
// "x-baseline". Filtering out the baseline drops the ratio.

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/paddockdev/paddock/agent"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/sandbox/dirsandbox"
)

type baseline struct {
	elapsed time.Duration
	n       int
}

func (bl *baseline) record(b *testing.B) {
	bl.elapsed += b.Elapsed()
	bl.n += b.N
}

func (bl *baseline) report(b *testing.B) {
	if bl.n == 0 || b.N == 0 {
		return
	}
	b.ReportMetric((float64(b.Elapsed())/float64(b.N))/(float64(bl.elapsed)/float64(bl.n)), "x-baseline")
}

// BenchmarkSetCall compares a tool call through Set.Call (schema
// validation, then decoding) with json.Unmarshal of the same input into the
// tool's struct, the least any tool does with its input.
func BenchmarkSetCall(b *testing.B) {
	type input struct {
		Files []struct {
			Path    string `json:"path"`
			Content string `json:"content"`
		} `json:"files"`
		Message string `json:"message"`
	}
	schema := agent.Object(map[string]*agent.Schema{
		"files": agent.Array("files", agent.Object(map[string]*agent.Schema{
			"path":    agent.String("path", true),
			"content": agent.String("content", false),
		}, "path", "content")),
		"message": agent.String("message", false),
	}, "files")
	tool := agent.NewTool("write", "write", schema, func(ctx context.Context, raw json.RawMessage) (agent.Result, error) {
		var in input
		if err := json.Unmarshal(raw, &in); err != nil {
			return agent.Result{}, err
		}
		return agent.Result{Content: in.Message}, nil
	})
	set, err := agent.NewSet(tool)
	if err != nil {
		b.Fatal(err)
	}
	raw := json.RawMessage(`{"files":[{"path":"src/a.go","content":"package a\n\nfunc A() int { return 1 }\n"},{"path":"src/b.go","content":"package b\n"},{"path":"README.md","content":"# demo\n"}],"message":"three files"}`)
	ctx := context.Background()
	var bl baseline
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var in input
			if err := json.Unmarshal(raw, &in); err != nil {
				b.Fatal(err)
			}
		}
		bl.record(b)
	})
	b.Run("Set.Call", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := set.Call(ctx, "write", raw)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
		bl.report(b)
	})
}

// BenchmarkExecuteBash compares execute_bash running `true` through
// Set.Call with sandbox.Exec of the same command line on the same
// directory sandbox: the cost the tool layer adds to a command.
func BenchmarkExecuteBash(b *testing.B) {
	drv, err := dirsandbox.New(b.TempDir(), sandbox.Spec{Network: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	sb := sandbox.New(drv, nil)
	defer sb.Close(context.Background())
	set, err := agent.StandardTools(sb, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	raw := json.RawMessage(`{"command":"true"}`)
	var bl baseline
	b.Run("sandbox.Exec", func(b *testing.B) {
		for b.Loop() {
			res, err := sb.Exec(ctx, sandbox.ExecRequest{Command: "true"})
			if err != nil || !res.Success() {
				b.Fatal(err)
			}
		}
		bl.record(b)
	})
	b.Run("execute_bash", func(b *testing.B) {
		for b.Loop() {
			res, err := set.Call(ctx, "execute_bash", raw)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
		bl.report(b)
	})
}
