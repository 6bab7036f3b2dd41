package secretbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FileSchema is the schema name of a secret store [File].
const FileSchema = "paddock.secrets"

// FileVersion is the newest store [File] version this package reads, and
// the version it writes.
const FileVersion = 1

// File is the on-disk secret store: sealed values by name. See the package
// documentation for its format.
type File struct {
	// Schema is FileSchema.
	Schema string `json:"schema"`
	// Version is the format version, at most FileVersion.
	Version int `json:"version"`
	// Secrets holds each value sealed under its name (see Seal).
	Secrets map[string]Sealed `json:"secrets"`
}

// ReadFile reads the store at path. If there is no file at path, it returns
// an empty store (with a non-nil Secrets map) and no error.
//
// It refuses a file whose schema is not [FileSchema] or whose version is
// newer than [FileVersion].
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Schema: FileSchema, Version: FileVersion, Secrets: map[string]Sealed{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("secretbox: %w", err)
	}
	f, err := parseFile(data)
	if err != nil {
		return nil, fmt.Errorf("secretbox: %s: %w", path, err)
	}
	return f, nil
}

func parseFile(data []byte) (*File, error) {
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	switch {
	case f.Schema != FileSchema:
		return nil, fmt.Errorf("schema is %q, want %q", f.Schema, FileSchema)
	case f.Version > FileVersion:
		return nil, fmt.Errorf("version %d is newer than this paddock supports (%d); upgrade paddock to read it", f.Version, FileVersion)
	case f.Version < 1:
		return nil, fmt.Errorf("invalid version %d", f.Version)
	}
	if f.Secrets == nil {
		f.Secrets = map[string]Sealed{}
	}
	return &f, nil
}

// WriteFile replaces the store at path with f, atomically: after a crash
// at any point, path holds either its old contents or f, and once WriteFile
// returns nil the new contents are durable. The file has mode 0600. It
// writes the current [FileSchema] and [FileVersion], whatever f's Schema
// and Version fields say.
//
// WriteFile writes a temporary file in path's directory; it removes it
// again on failure.
func WriteFile(path string, f *File) error {
	out := File{Schema: FileSchema, Version: FileVersion, Secrets: f.Secrets}
	if out.Secrets == nil {
		out.Secrets = map[string]Sealed{}
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("secretbox: %w", err)
	}
	data = append(data, '\n')
	dir := filepath.Dir(path)
	tmp, err := writeTemp(dir, filepath.Base(path), data)
	if err != nil {
		return fmt.Errorf("secretbox: writing store: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("secretbox: writing store: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("secretbox: writing store: %w", err)
	}
	return nil
}

// writeTemp writes data to a new file with mode 0600 in dir, named after
// base, syncs it and returns its path. On failure it leaves no file behind.
func writeTemp(dir, base string, data []byte) (name string, err error) {
	// CreateTemp opens with O_EXCL and mode 0600, so no other user can have
	// opened the file before the data is in it.
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return f.Name(), err
}

// syncDir makes the creation, renaming and removal of entries in dir
// durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
