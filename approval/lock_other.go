//go:build !unix

package approval

import (
	"context"
	"errors"
)

// lockFile is not implemented off Unix yet: the file store fails rather
// than running without the cross-process lock.
func lockFile(ctx context.Context, path string) (func() error, error) {
	return nil, errors.ErrUnsupported
}
