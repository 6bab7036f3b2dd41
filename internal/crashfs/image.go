package crashfs

import (
	"io/fs"
	"maps"
	"slices"
)

// Image is one possible state of the disk after a crash; see the package
// documentation for the eight kinds.
type Image struct {
	// Name says which data and namespace modes made the image, as
	// "data/namespace": "keep/keepnames", "cut/dropnames" and so on.
	Name string

	dirs  map[string]fs.FileMode // by path, the root included
	files map[string]imageFile   // by path
}

type imageFile struct {
	data []byte
	mode fs.FileMode
}

// FS returns a new file system holding the image, with everything in it
// durable and no crash armed. It shares nothing with the file system that
// crashed or with other file systems made from the image.
func (img Image) FS() *FS {
	fsys := New()
	for _, p := range slices.Sorted(maps.Keys(img.dirs)) {
		// Sorted order creates parents first, with their own modes.
		if _, err := fsys.putDir(p, components(p), img.dirs[p]); err != nil {
			panic("crashfs: malformed image: " + err.Error())
		}
	}
	if m, ok := img.dirs["/"]; ok {
		fsys.root.mode = m
	}
	for _, p := range slices.Sorted(maps.Keys(img.files)) {
		f := img.files[p]
		if err := fsys.putFile(p, p, f.data, f.mode); err != nil {
			panic("crashfs: malformed image: " + err.Error())
		}
	}
	return fsys
}

// A dataMode decides a file's content in an image from its inode.
type dataMode struct {
	name    string
	content func(n *node) []byte
}

var dataModes = []dataMode{
	{"keep", func(n *node) []byte { return n.data }},
	{"drop", func(n *node) []byte { return n.durable }},
	{"cut", cutContent},
	{"zero", zeroContent},
}

var nameModes = []struct {
	name    string
	durable bool
}{
	{"keepnames", false},
	{"dropnames", true},
}

// synced returns the length of the longest common prefix of n's durable
// and current contents.
func synced(n *node) int {
	p := 0
	for p < len(n.data) && p < len(n.durable) && n.data[p] == n.durable[p] {
		p++
	}
	return p
}

// cutContent is the current content cut, at a 512-byte boundary, half-way
// through the part that is not durable, but never before the durable prefix.
func cutContent(n *node) []byte {
	p := synced(n)
	if len(n.data) <= p {
		return n.data
	}
	k := (p + (len(n.data)-p)/2) / 512 * 512
	return n.data[:max(k, p)]
}

// zeroContent is the current length with only the durable prefix's data.
func zeroContent(n *node) []byte {
	p := synced(n)
	out := make([]byte, len(n.data))
	copy(out, n.data[:p])
	return out
}

// takeImages returns the eight images of fsys's state, which must be locked.
func (fsys *FS) takeImages() []Image {
	var images []Image
	for _, dm := range dataModes {
		for _, nm := range nameModes {
			img := Image{
				Name:  dm.name + "/" + nm.name,
				dirs:  map[string]fs.FileMode{},
				files: map[string]imageFile{},
			}
			walkTree(fsys.root, "/", nm.durable, func(p string, n *node) {
				if n.isDir() {
					img.dirs[p] = n.mode
				} else {
					img.files[p] = imageFile{slices.Clone(dm.content(n)), n.mode}
				}
			})
			images = append(images, img)
		}
	}
	return images
}
