package proposal

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// gitHead returns the commit HEAD names in the repository at or above dir,
// reading loose and packed refs, or "" when there is none.
func gitHead(dir string) string {
	gitDir := ""
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		if fi, err := os.Stat(p); err == nil {
			if fi.IsDir() {
				gitDir = p
			} else if b, err := os.ReadFile(p); err == nil {
				if g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); ok {
					g = strings.TrimSpace(g)
					if !filepath.IsAbs(g) {
						g = filepath.Join(d, g)
					}
					gitDir = g
				}
			}
			break
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
	if gitDir == "" {
		return ""
	}
	common := gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = c
	}
	ref := "HEAD"
	for range 6 {
		base := common
		if !strings.HasPrefix(ref, "refs/") {
			base = gitDir
		}
		v := ""
		if b, err := os.ReadFile(filepath.Join(base, filepath.FromSlash(ref))); err == nil {
			v = strings.TrimSpace(string(b))
		} else if f, err := os.Open(filepath.Join(common, "packed-refs")); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if h, name, ok := strings.Cut(sc.Text(), " "); ok && name == ref {
					v = h
					break
				}
			}
			f.Close()
		}
		target, ok := strings.CutPrefix(v, "ref:")
		if !ok {
			return v
		}
		ref = strings.TrimSpace(target)
		if strings.Contains(ref, "..") {
			return ""
		}
	}
	return ""
}
