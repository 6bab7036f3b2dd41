package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os/exec"
	"path"
	"strings"
	"time"

	"github.com/paddockdev/paddock/sandbox"
)

// CommandGuard decides whether execute_bash may run a command: it is the hook
// where a host plugs in shell safety analysis (a rules analyzer, an LLM
// classifier, an approval check). It is called before every command, with the
// command line and its working directory relative to the work directory.
//
// A nil error lets the command run. Any error stops it, and its text is shown
// to the model ("command refused: <error>"), so it should say why and what to
// do instead. A guard that cannot decide (a classifier down) must return an
// error: the tool fails closed. Implementations must be safe for concurrent
// use.
type CommandGuard interface {
	CheckCommand(ctx context.Context, command, dir string) error
}

// CommandGuardFunc adapts a function to a [CommandGuard].
type CommandGuardFunc func(ctx context.Context, command, dir string) error

// CheckCommand calls f.
func (f CommandGuardFunc) CheckCommand(ctx context.Context, command, dir string) error {
	return f(ctx, command, dir)
}

// ToolOptions are the optional settings of [StandardTools] and the tool
// constructors. A nil *ToolOptions means the defaults.
type ToolOptions struct {
	// Guard checks every execute_bash command before it runs; nil runs
	// every command (the sandbox still contains it).
	Guard CommandGuard
	// Timeout is execute_bash's timeout when the model gives none, and the
	// most it may ask for; zero means 2 minutes default, 10 minutes most.
	Timeout    time.Duration
	MaxTimeout time.Duration
	// MaxOutput caps the bytes of stdout and of stderr the model sees (the
	// head and tail are kept); zero means 32 KiB.
	MaxOutput int
	// MaxReadBytes caps the size of a file read_file returns; zero means
	// 256 KiB.
	MaxReadBytes int64
	// Network must be true (the sandbox's Spec allows network) for
	// http_request to exist; AllowDomains then lists the hosts it may reach
	// ("example.com" exactly, "*.example.com" for its subdomains). With
	// either unset, StandardTools has no http_request.
	Network      bool
	AllowDomains []string
	// HTTPClient makes http_request's requests; nil means a client with a
	// 30-second timeout. Its CheckRedirect is replaced by the allow-list check.
	HTTPClient *http.Client
	// Searcher backs web_search; nil leaves web_search out of StandardTools.
	Searcher Searcher
}

func (o *ToolOptions) orDefault() ToolOptions {
	var v ToolOptions
	if o != nil {
		v = *o
	}
	v.Timeout = cmpOr(v.Timeout, 2*time.Minute)
	v.MaxTimeout = cmpOr(v.MaxTimeout, 10*time.Minute)
	if v.Timeout > v.MaxTimeout {
		v.Timeout = v.MaxTimeout
	}
	v.MaxOutput = cmpOr(v.MaxOutput, 32<<10)
	v.MaxReadBytes = cmpOr(v.MaxReadBytes, 256<<10)
	return v
}

// StandardTools returns the standard tools over a sandbox: execute_bash,
// read_file, write_file, edit_file, list_files, then http_request when
// opts.Network and opts.AllowDomains are set, and web_search when
// opts.Searcher is set. Every tool acts only through sb.
func StandardTools(sb *sandbox.Sandbox, opts *ToolOptions) (*Set, error) {
	o := opts.orDefault()
	tools := []Tool{ExecuteBash(sb, &o), ReadFile(sb, &o), WriteFile(sb), EditFile(sb), ListFiles(sb)}
	if o.Network && len(o.AllowDomains) > 0 {
		h, err := HTTPRequest(&o)
		if err != nil {
			return nil, err
		}
		tools = append(tools, h)
	}
	if o.Searcher != nil {
		tools = append(tools, WebSearch(o.Searcher))
	}
	return NewSet(tools...)
}

// fileErr turns a sandbox file-tool error into a message the model can act
// on; context errors are returned as they are.
func fileErr(tool, name string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, sandbox.ErrPathEscape):
		return toolErr(tool, err, "path %q leaves the sandbox; use a path relative to the work directory", name)
	case errors.Is(err, fs.ErrNotExist):
		return toolErr(tool, err, "%q does not exist; use list_files to see what does", name)
	case errors.Is(err, sandbox.ErrTooLarge):
		return toolErr(tool, err, "%q is too large to read whole; read a range of lines, or use execute_bash with head/grep", name)
	case errors.Is(err, sandbox.ErrSpecialFile):
		return toolErr(tool, err, "%q is not a regular file (a device, pipe, socket or hard link), which file tools refuse", name)
	case errors.Is(err, fs.ErrExist):
		return toolErr(tool, err, "%q already exists", name)
	case errors.Is(err, errors.ErrUnsupported):
		return err
	}
	var ee *sandbox.EditError
	if errors.As(err, &ee) {
		if ee.Count == 0 {
			return toolErr(tool, err, "old_string was not found in %q; read the file and copy the text exactly, whitespace included", name)
		}
		return toolErr(tool, err, "old_string occurs %d times in %q; include more surrounding lines so that it occurs once", ee.Count, name)
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return toolErr(tool, err, "%s: %s", name, msg)
}

type funcTool struct {
	name, desc string
	schema     *Schema
	run        func(ctx context.Context, input json.RawMessage) (Result, error)
}

func (t *funcTool) Name() string         { return t.name }
func (t *funcTool) Description() string  { return t.desc }
func (t *funcTool) InputSchema() *Schema { return t.schema }
func (t *funcTool) validatesInput()      {}

// Run validates input against the schema, then runs the tool; input that
// does not match is a *ToolError wrapping the *ValidationError.
func (t *funcTool) Run(ctx context.Context, input json.RawMessage) (Result, error) {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	if err := validate(t.name, t.schema, input); err != nil {
		return Result{}, err
	}
	return t.run(ctx, input)
}

// NewTool returns a Tool made of its parts. Its Run validates the input
// against schema before calling run, so run receives only input that matches.
func NewTool(name, description string, schema *Schema, run func(ctx context.Context, input json.RawMessage) (Result, error)) Tool {
	return &funcTool{name: name, desc: description, schema: schema, run: run}
}

// ExecuteBash returns the execute_bash tool: a shell command line run by
// /bin/sh -c in the sandbox, after opts.Guard allows it, with a timeout and
// an output cap. The model sees the exit status, stdout and stderr.
func ExecuteBash(sb *sandbox.Sandbox, opts *ToolOptions) Tool {
	o := opts.orDefault()
	maxSec := o.MaxTimeout.Seconds()
	schema := Object(map[string]*Schema{
		"command":         String("The shell command line to run.", true),
		"cwd":             String("Working directory, relative to the work directory; default the work directory.", false),
		"timeout_seconds": Integer(fmt.Sprintf("Seconds before the command is killed; default %d.", int(o.Timeout.Seconds())), 1, maxSec),
	}, "command")
	return NewTool(ExecuteBashName,
		"Run a shell command in the sandbox's work directory and return its exit status, stdout and stderr. Output is capped; long runs are killed at the timeout.",
		schema, func(ctx context.Context, input json.RawMessage) (Result, error) {
			var in struct {
				Command        string `json:"command"`
				Cwd            string `json:"cwd"`
				TimeoutSeconds int    `json:"timeout_seconds"`
			}
			if err := decodeInput(ExecuteBashName, input, &in); err != nil {
				return Result{}, err
			}
			if o.Guard != nil {
				if err := o.Guard.CheckCommand(ctx, in.Command, cmpOr(in.Cwd, ".")); err != nil {
					if ctx.Err() != nil {
						return Result{}, ctx.Err()
					}
					return Result{}, toolErr(ExecuteBashName, nil, "command refused: %v", err)
				}
			}
			timeout := o.Timeout
			if in.TimeoutSeconds > 0 {
				timeout = time.Duration(in.TimeoutSeconds) * time.Second
			}
			res, err := sb.Exec(ctx, sandbox.ExecRequest{Command: in.Command, Dir: in.Cwd, Timeout: timeout, MaxOutput: o.MaxOutput})
			if err != nil {
				if ctx.Err() != nil {
					return Result{}, ctx.Err()
				}
				return Result{}, execErr(ExecuteBashName, in.Cwd, err)
			}
			if res.Reason == sandbox.Cancelled {
				return Result{}, ctx.Err()
			}
			return Result{Content: formatExec(res, timeout), IsError: !res.Success()}, nil
		})
}

func execErr(tool, dir string, err error) error {
	switch {
	case errors.Is(err, sandbox.ErrPathEscape):
		return toolErr(tool, err, "cwd %q leaves the sandbox; use a directory relative to the work directory", dir)
	case errors.Is(err, fs.ErrNotExist):
		return toolErr(tool, err, "cwd %q does not exist; create it first or use an existing directory", dir)
	case errors.Is(err, exec.ErrNotFound):
		return toolErr(tool, err, "the program was not found in the sandbox")
	case errors.Is(err, sandbox.ErrInvalidRequest):
		msg := err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		return toolErr(tool, err, "invalid command: %s", msg)
	}
	return err
}

func formatExec(res *sandbox.ExecResult, timeout time.Duration) string {
	var b strings.Builder
	switch res.Reason {
	case sandbox.Exited:
		fmt.Fprintf(&b, "exit status %d", res.ExitCode)
	case sandbox.TimedOut:
		fmt.Fprintf(&b, "killed: timed out after %s", timeout)
	case sandbox.Signaled:
		fmt.Fprintf(&b, "killed by signal %d", int(res.Signal))
	default:
		fmt.Fprintf(&b, "ended: %s", res.Reason)
	}
	if res.Truncated {
		b.WriteString(" (output truncated: the middle was dropped)")
	}
	b.WriteString("\n")
	if len(res.Stdout) > 0 {
		b.WriteString("stdout:\n")
		b.Write(res.Stdout)
		if res.Stdout[len(res.Stdout)-1] != '\n' {
			b.WriteString("\n")
		}
	}
	if len(res.Stderr) > 0 {
		b.WriteString("stderr:\n")
		b.Write(res.Stderr)
		if res.Stderr[len(res.Stderr)-1] != '\n' {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// ReadFile returns the read_file tool: the content of a file in the sandbox,
// whole or a range of lines, up to opts.MaxReadBytes.
func ReadFile(sb *sandbox.Sandbox, opts *ToolOptions) Tool {
	o := opts.orDefault()
	schema := Object(map[string]*Schema{
		"path":       String("File path relative to the work directory.", true),
		"start_line": Integer("First line to return, from 1; default 1.", 1, 1e9),
		"max_lines":  Integer("Most lines to return; default all.", 1, 1e9),
	}, "path")
	return NewTool(ReadFileName,
		"Read a text file in the sandbox, whole or a range of lines.",
		schema, func(ctx context.Context, input json.RawMessage) (Result, error) {
			var in struct {
				Path      string `json:"path"`
				StartLine int    `json:"start_line"`
				MaxLines  int    `json:"max_lines"`
			}
			if err := decodeInput(ReadFileName, input, &in); err != nil {
				return Result{}, err
			}
			data, err := sb.ReadFile(ctx, in.Path, o.MaxReadBytes)
			if err != nil {
				return Result{}, fileErr(ReadFileName, in.Path, err)
			}
			if in.StartLine == 0 && in.MaxLines == 0 {
				return Result{Content: string(data)}, nil
			}
			lines := strings.SplitAfter(string(data), "\n")
			if len(lines) > 0 && lines[len(lines)-1] == "" {
				lines = lines[:len(lines)-1]
			}
			start := max(in.StartLine, 1) - 1
			if start >= len(lines) {
				return Result{}, toolErr(ReadFileName, nil, "%q has %d lines; start_line %d is past the end", in.Path, len(lines), in.StartLine)
			}
			end := len(lines)
			if in.MaxLines > 0 {
				end = min(end, start+in.MaxLines)
			}
			return Result{Content: strings.Join(lines[start:end], "")}, nil
		})
}

// WriteFile returns the write_file tool: create or replace a file in the
// sandbox atomically, creating missing parent directories.
func WriteFile(sb *sandbox.Sandbox) Tool {
	schema := Object(map[string]*Schema{
		"path":    String("File path relative to the work directory.", true),
		"content": String("The whole new content of the file.", false),
	}, "path", "content")
	return NewTool(WriteFileName,
		"Create or replace a file in the sandbox with the given content (parent directories are created).",
		schema, func(ctx context.Context, input json.RawMessage) (Result, error) {
			var in struct {
				Path    string `json:"path"`
				Content string `json:"content"`
			}
			if err := decodeInput(WriteFileName, input, &in); err != nil {
				return Result{}, err
			}
			if dir := path.Dir(path.Clean(strings.ReplaceAll(in.Path, "\\", "/"))); dir != "." && dir != "/" {
				if err := sb.Mkdir(ctx, dir, 0o755); err != nil {
					return Result{}, fileErr(WriteFileName, in.Path, err)
				}
			}
			if err := sb.WriteFile(ctx, in.Path, []byte(in.Content), 0o644); err != nil {
				return Result{}, fileErr(WriteFileName, in.Path, err)
			}
			return Result{Content: fmt.Sprintf("wrote %d bytes to %s", len(in.Content), in.Path)}, nil
		})
}

// EditFile returns the edit_file tool: replace the one occurrence of a string
// in a file, atomically.
func EditFile(sb *sandbox.Sandbox) Tool {
	schema := Object(map[string]*Schema{
		"path":       String("File path relative to the work directory.", true),
		"old_string": String("The exact text to replace; it must occur exactly once in the file.", true),
		"new_string": String("The replacement text.", false),
	}, "path", "old_string", "new_string")
	return NewTool(EditFileName,
		"Replace one exact occurrence of old_string with new_string in a file in the sandbox.",
		schema, func(ctx context.Context, input json.RawMessage) (Result, error) {
			var in struct {
				Path      string `json:"path"`
				OldString string `json:"old_string"`
				NewString string `json:"new_string"`
			}
			if err := decodeInput(EditFileName, input, &in); err != nil {
				return Result{}, err
			}
			if err := sb.Edit(ctx, in.Path, in.OldString, in.NewString); err != nil {
				return Result{}, fileErr(EditFileName, in.Path, err)
			}
			return Result{Content: "edited " + in.Path}, nil
		})
}
