//go:build !unix

package approval

import (
	"testing"
	"time"
)

// cpuTime is not measured off Unix: the benchmarks report 0.
func cpuTime(b *testing.B) time.Duration { return 0 }
