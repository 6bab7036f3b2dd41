//go:build !unix

package workspace

import (
	"errors"
	"fmt"
)

// flockFile is not implemented off Unix yet: opening an instance there
// fails rather than running without the cross-process lock.
func flockFile(path string) (func() error, error) {
	return nil, fmt.Errorf("workspace: lock %s: %w", path, errors.ErrUnsupported)
}
