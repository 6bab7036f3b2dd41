package sandbox

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/paddockdev/paddock/internal/rootfs"
)

// ErrPathEscape is returned, wrapped, for a path that leaves its root: an
// absolute path, a path with a ".." element, or a symbolic link whose target
// resolves outside the project or the sandbox.
var ErrPathEscape = rootfs.ErrPathEscape

// ErrBlocked is returned, wrapped in a [*SelectionError], for a selected path
// inside a directory that is blocked by default (.git, node_modules, dist)
// and not allowed by [PrepareOptions.Allow], or inside the state directory.
var ErrBlocked = errors.New("sandbox: path is blocked")

// ErrUnsafeFile is returned, wrapped in a [*SelectionError], for a selected
// file that is not safe to copy: a symbolic link the policy refuses, a
// regular file with more than one hard link, a device, a FIFO or a socket.
var ErrUnsafeFile = errors.New("sandbox: unsafe file")

// ErrLimit is returned, wrapped in a [*LimitError], when a selection is over
// [PrepareOptions.MaxFiles] or [PrepareOptions.MaxBytes].
var ErrLimit = errors.New("sandbox: selection over a limit")

// A SelectionError reports a selected path that the selection policy
// refuses. Err, when not nil, is one of [ErrPathEscape], [ErrBlocked],
// [ErrUnsafeFile] or an error from the file system, and errors.Is sees it.
type SelectionError struct {
	// Path is the pattern or project-relative path that was refused.
	Path string
	// Reason says why, in words fit for a user or a model.
	Reason string
	// Err is the class of the refusal, or nil.
	Err error
}

func (e *SelectionError) Error() string {
	return "sandbox: refusing " + strconv.Quote(e.Path) + ": " + e.Reason
}

func (e *SelectionError) Unwrap() error { return e.Err }

// A LimitError reports a selection over one of the caps of
// [PrepareOptions]. errors.Is(err, ErrLimit) holds for it.
type LimitError struct {
	// Option names the field of PrepareOptions that sets the cap:
	// "MaxFiles" or "MaxBytes".
	Option string
	// Limit is the cap in effect.
	Limit int64
}

func (e *LimitError) Error() string {
	what := "files"
	if e.Option == "MaxBytes" {
		what = "bytes"
	}
	return fmt.Sprintf("sandbox: the selection has more than %d %s; select fewer files or raise PrepareOptions.%s", e.Limit, what, e.Option)
}

func (e *LimitError) Is(target error) bool { return target == ErrLimit }
