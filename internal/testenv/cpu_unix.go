//go:build unix

package testenv

import (
	"syscall"
	"testing"
	"time"
)

// CPUTime returns the user and system CPU time of the process so far, for
// benchmarks that report CPU besides wall time.
func CPUTime(tb testing.TB) time.Duration { return rusage(tb, syscall.RUSAGE_SELF) }

// ChildrenCPUTime returns the user and system CPU time of the process's
// waited-for children so far (a baseline run as a command).
func ChildrenCPUTime(tb testing.TB) time.Duration { return rusage(tb, syscall.RUSAGE_CHILDREN) }

func rusage(tb testing.TB, who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
