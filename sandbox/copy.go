package sandbox

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// dirChunk is the most files of one directory a worker copies in a row.
const dirChunk = 256

// bufSize is the size of the copy buffers.
const bufSize = 256 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}

// copier copies selected files into work/ and input/.
type copier struct {
	root        *os.Root
	work, input string      // destination trees
	umask       fs.FileMode // bits the process umask removes
	noClone     atomic.Bool // set once a clone failed as unsupported

	mu   sync.Mutex
	dirs map[string]*dirHandle

	// made holds, for every selected directory, the making of its two
	// copies; it is filled before the workers start and only read after.
	made map[string]*madeDir
}

// madeDir is the making of one directory in work/ and input/, done once by
// the first worker that needs it.
type madeDir struct {
	once sync.Once
	err  error
}

// mkdir makes the directory rel (and its parents first) in work/ and input/
// unless that is done already. Workers make directories as they reach them,
// in parallel, rather than all of them before the copy starts.
func (c *copier) mkdir(rel string) error {
	if rel == "." {
		return nil
	}
	m := c.made[rel]
	if m == nil {
		return fmt.Errorf("sandbox: internal error: directory %s was not selected", rel)
	}
	m.once.Do(func() {
		if m.err = c.mkdir(path.Dir(rel)); m.err != nil {
			return
		}
		for _, d := range [...]string{c.work, c.input} {
			if err := os.Mkdir(filepath.Join(d, filepath.FromSlash(rel)), 0o700); err != nil {
				m.err = fmt.Errorf("sandbox: %w", err)
				return
			}
		}
	})
	return m.err
}

// dirHandle is a source directory opened as a root, shared by the workers
// copying its files and closed after the last one.
type dirHandle struct {
	once sync.Once
	root *os.Root
	err  error
	left atomic.Int64
}

// result is what copying one file learned.
type result struct {
	sum [sha256.Size]byte
}

// copyAll copies es with at most workers goroutines. It stops at the first
// error or when ctx is done.
func (c *copier) copyAll(ctx context.Context, es []*entry, workers int) ([]result, error) {
	c.dirs = make(map[string]*dirHandle)
	var files []int
	for i, e := range es {
		if e.isLink {
			continue
		}
		files = append(files, i)
		h := c.dirs[e.dir]
		if h == nil {
			h = new(dirHandle)
			c.dirs[e.dir] = h
		}
		h.left.Add(1)
	}
	defer func() {
		for _, h := range c.dirs {
			if h.root != nil && h.root != c.root {
				h.root.Close()
			}
		}
	}()
	// Workers take whole directories (in chunks): creating files in one
	// directory from several threads serializes on its lock, and the
	// waiting spins, which costs more than the parallelism gains.
	slices.SortStableFunc(files, func(a, b int) int { return strings.Compare(es[a].dir, es[b].dir) })
	var chunks [][]int
	for start := 0; start < len(files); {
		end := start + 1
		for end < len(files) && end-start < dirChunk && es[files[end]].dir == es[files[start]].dir {
			end++
		}
		chunks = append(chunks, files[start:end])
		start = end
	}
	res := make([]result, len(es))
	var next atomic.Int64
	g, ctx := errgroup.WithContext(ctx)
	for range min(workers, len(chunks)) {
		g.Go(func() error {
			h := sha256.New()
			bp := bufPool.Get().(*[]byte)
			defer bufPool.Put(bp)
			for {
				n := int(next.Add(1)) - 1
				if n >= len(chunks) {
					return nil
				}
				for _, i := range chunks[n] {
					if err := ctx.Err(); err != nil {
						return err
					}
					if err := c.copyFile(es[i], &res[i], h, *bp); err != nil {
						return err
					}
				}
			}
		})
	}
	return res, g.Wait()
}

// dirRoot returns the open source directory of e, opening it on first use.
func (c *copier) dirRoot(dir string) (*dirHandle, error) {
	c.mu.Lock()
	h := c.dirs[dir]
	c.mu.Unlock()
	h.once.Do(func() {
		if dir == "." {
			h.root = c.root
			return
		}
		h.root, h.err = c.root.OpenRoot(dir)
	})
	return h, h.err
}

func (c *copier) release(h *dirHandle) {
	if h.left.Add(-1) == 0 && h.root != c.root {
		h.root.Close()
	}
}

// copyFile copies the regular file e into both trees, hashing it on the
// way. The source is read once.
func (c *copier) copyFile(e *entry, r *result, h hash.Hash, buf []byte) (err error) {
	dh, err := c.dirRoot(e.dir)
	if err != nil {
		return fmt.Errorf("sandbox: %s: %w", e.dir, err)
	}
	defer c.release(dh)
	if err := c.mkdir(e.dir); err != nil {
		return err
	}
	src, err := dh.root.OpenFile(e.name, os.O_RDONLY|openSourceFlags, 0)
	if err != nil {
		return fmt.Errorf("sandbox: %s: %w", e.rel, err)
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return fmt.Errorf("sandbox: %s: %w", e.rel, err)
	}
	if !st.Mode().IsRegular() || !os.SameFile(st, e.fi) || linkCount(st) > 1 || st.Size() != e.size || !st.ModTime().Equal(e.mtime) {
		return fmt.Errorf("sandbox: %s changed while the sandbox was being prepared; prepare again", e.rel)
	}
	rel := filepath.FromSlash(e.rel)
	w, err := createDst(filepath.Join(c.work, rel), e.perm)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, w.Close()) }()
	in, err := createDst(filepath.Join(c.input, rel), e.perm&^0o222)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, in.Close()) }()

	h.Reset()
	if err := c.copyData(src, w, in, e.size, h, buf); err != nil {
		return fmt.Errorf("sandbox: copying %s: %w", e.rel, err)
	}
	h.Sum(r.sum[:0])
	if e.perm&c.umask != 0 {
		if err := w.Chmod(e.perm); err != nil {
			return err
		}
		if err := in.Chmod(e.perm &^ 0o222); err != nil {
			return err
		}
	}
	if err := w.SetModTime(e.mtime); err != nil {
		return err
	}
	return in.SetModTime(e.mtime)
}

// errUnsupported is returned by clones the file system cannot make.
var errUnsupported = errors.ErrUnsupported

// copyData copies size bytes of src into w and in and through h. When the
// file system has reflinks it clones, and then only reads src to hash it.
func (c *copier) copyData(src *os.File, w, in dstFile, size int64, h hash.Hash, buf []byte) error {
	if size > 0 && !c.noClone.Load() {
		err := w.cloneFrom(src)
		if err == nil {
			err = in.cloneFromDst(w)
		}
		switch {
		case err == nil:
			n, err := io.CopyBuffer(h, io.LimitReader(src, size), buf)
			if err == nil && n != size {
				err = io.ErrUnexpectedEOF
			}
			return err
		case errors.Is(err, errUnsupported):
			c.noClone.Store(true)
			if err := w.Truncate(0); err != nil {
				return err
			}
		default:
			return err
		}
	}
	for left := size; left > 0; {
		b := buf[:min(int64(len(buf)), left)]
		if _, err := io.ReadFull(src, b); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		h.Write(b)
		if _, err := w.Write(b); err != nil {
			return err
		}
		if _, err := in.Write(b); err != nil {
			return err
		}
		left -= int64(len(b))
	}
	return nil
}
