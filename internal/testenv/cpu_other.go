//go:build !unix

package testenv

import (
	"testing"
	"time"
)

// CPUTime is not measured off Unix: it returns 0.
func CPUTime(tb testing.TB) time.Duration { return 0 }

// ChildrenCPUTime is not measured off Unix: it returns 0.
func ChildrenCPUTime(tb testing.TB) time.Duration { return 0 }
