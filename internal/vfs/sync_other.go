//go:build !linux

package vfs

import "os"

func syncFile(f *os.File) error { return f.Sync() }
