package proposal

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/paddockdev/paddock/internal/testenv"
	"github.com/paddockdev/paddock/internal/vfs"
)

// npmRegistry is the registry the release history is read from.
const npmRegistry = "https://registry.npmjs.org/"

// TestReplayNPMReleases replays the published releases of a real project
// as a history: every version of an npm package (PADDOCK_REPLAY_NPM,
// default yargs, 267 versions), in semantic-version order, becomes one
// commit of a temporary git repository (built with git fast-import from
// the verified tarballs), and that history goes through replayCommits
// like TestReplayHistory's: a sandbox, work/ made the next release, Create,
// Apply, and the project compared with git's tree.
//
// Tarballs are downloaded once into os.UserCacheDir()/paddock/replay/<pkg>/
// (PADDOCK_REPLAY_CACHE overrides the directory), each checked against the
// registry's dist.integrity (sha512) or dist.shasum. The package document
// is cached too (packument.json; delete it to pick up new releases), so a
// cached history never changes and replays offline.
// Without the registry and without a cache the test skips, or fails when
// PADDOCK_REQUIRE names "network". PADDOCK_REPLAY_MAX caps the versions
// (the newest ones are kept).
func TestReplayNPMReleases(t *testing.T) {
	if testing.Short() {
		t.Skip("replay is long")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	pkg := os.Getenv("PADDOCK_REPLAY_NPM")
	if pkg == "" {
		pkg = "yargs"
	}
	if !validNPMName(pkg) {
		t.Fatalf("PADDOCK_REPLAY_NPM=%q is not an unscoped npm package name; use a name like yargs", pkg)
	}
	dir := os.Getenv("PADDOCK_REPLAY_CACHE")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		dir = filepath.Join(base, "paddock", "replay")
	}
	dir = filepath.Join(dir, pkg)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("cache directory: %v (set PADDOCK_REPLAY_CACHE to a writable directory)", err)
	}
	limit := 0
	if s := os.Getenv("PADDOCK_REPLAY_MAX"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 2 {
			t.Fatalf("PADDOCK_REPLAY_MAX=%q: want a number of commits, at least 2", s)
		}
		limit = n
	}

	start := time.Now()
	c := &npmCache{dir: dir, pkg: pkg, client: &http.Client{Timeout: 60 * time.Second}}
	doc, err := c.packument()
	needNetwork(t, err)
	releases, err := doc.releases()
	if err != nil {
		t.Fatalf("%s: %v", pkg, err)
	}
	if limit > 0 && len(releases) > limit {
		releases = releases[len(releases)-limit:]
	}
	if len(releases) < 2 {
		t.Skipf("%s has %d release(s); a replay needs a history", pkg, len(releases))
	}
	fetched, err := c.tarballs(releases)
	needNetwork(t, err)
	t.Logf("%s: %d releases ready in %v (%d downloaded, cache %s)", pkg, len(releases), time.Since(start).Round(time.Millisecond), fetched, dir)

	start = time.Now()
	repo := t.TempDir()
	commits, labels := buildReleaseRepo(t, repo, c, releases)
	t.Logf("git history of %d commits built in %v", len(commits), time.Since(start).Round(time.Millisecond))

	start = time.Now()
	st := replayCommits(t, repo, commits, labels)
	t.Logf("%d proposals applied (%s %s -> %s) in %v: %s", st.applied, pkg, labels[0], labels[len(labels)-1], time.Since(start).Round(time.Millisecond), st)
	if want := len(commits) - 1; st.applied != want {
		t.Fatalf("%d proposals applied, want %d", st.applied, want)
	}
	if st.added == 0 || st.deled == 0 {
		t.Fatalf("the replay changed no lines (%s): the history is not one", st)
	}
	if limit == 0 && pkg == "yargs" && st.applied < 200 {
		t.Fatalf("only %d yargs releases replayed; the issue asks for at least 200", st.applied)
	}
}

// needNetwork skips t, or fails it when PADDOCK_REQUIRE names "network",
// when err is a failure to reach the registry; any other error (a bad
// status, a checksum mismatch, a full disk) fails t.
func needNetwork(t *testing.T, err error) {
	t.Helper()
	var ue *url.Error
	if errors.As(err, &ue) {
		testenv.Need(t, "network", fmt.Errorf("the npm registry is unreachable and the cache lacks what the replay needs: %w", err))
	}
	if err != nil {
		t.Fatal(err)
	}
}

// validNPMName reports whether name is an unscoped package name safe in a
// URL and a file name.
func validNPMName(name string) bool {
	if name == "" || len(name) > 214 || name[0] == '.' || name[0] == '_' {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r)) {
			return false
		}
	}
	return true
}

// npmCache downloads one package's registry data into dir.
type npmCache struct {
	dir    string
	pkg    string
	client *http.Client
}

// npmDoc is the part of a registry package document (packument) we read.
type npmDoc struct {
	Name     string `json:"name"`
	Versions map[string]struct {
		Version string `json:"version"`
		Dist    struct {
			Tarball   string `json:"tarball"`
			Integrity string `json:"integrity"`
			Shasum    string `json:"shasum"`
		} `json:"dist"`
	} `json:"versions"`
}

// npmRelease is one published version and where its tarball is.
type npmRelease struct {
	version   string
	tarball   string
	integrity string
	shasum    string
}

// packument returns the package document, from the cache when present
// (so that the replayed history stays the same), else from the registry,
// caching it.
func (c *npmCache) packument() (*npmDoc, error) {
	file := filepath.Join(c.dir, "packument.json")
	data, err := os.ReadFile(file)
	if err != nil {
		data, err = c.get(npmRegistry + c.pkg)
		if err != nil {
			return nil, err
		}
		if err := decodePackument(data, c.pkg, nil); err != nil {
			return nil, err
		}
		if err := vfs.WriteFileAtomic(vfs.OS, file, data, 0o644, true); err != nil {
			return nil, err
		}
	}
	doc := new(npmDoc)
	if err := decodePackument(data, c.pkg, doc); err != nil {
		return nil, fmt.Errorf("%s: %w (delete it to download it again)", file, err)
	}
	return doc, nil
}

func decodePackument(data []byte, pkg string, doc *npmDoc) error {
	if doc == nil {
		doc = new(npmDoc)
	}
	if err := json.Unmarshal(data, doc); err != nil {
		return fmt.Errorf("package document of %s: %w", pkg, err)
	}
	if doc.Name != pkg || len(doc.Versions) == 0 {
		return fmt.Errorf("package document names %q with %d versions, want %q with versions", doc.Name, len(doc.Versions), pkg)
	}
	return nil
}

// releases returns the versions in semantic-version order. (The registry's
// "time" field would give the publish order, but publish order interleaves
// maintenance lines, e.g. 15.4.1 after 16.0.0, and registry mirrors rewrite
// it; version order is the history of the code.)
func (d *npmDoc) releases() ([]npmRelease, error) {
	var rs []npmRelease
	for v, m := range d.Versions {
		if _, ok := parseSemver(v); !ok {
			return nil, fmt.Errorf("version %q is not a semantic version", v)
		}
		if m.Dist.Tarball == "" || m.Dist.Integrity == "" && m.Dist.Shasum == "" {
			return nil, fmt.Errorf("version %s has no tarball or no checksum", v)
		}
		rs = append(rs, npmRelease{version: v, tarball: m.Dist.Tarball, integrity: m.Dist.Integrity, shasum: m.Dist.Shasum})
	}
	slices.SortFunc(rs, func(a, b npmRelease) int { return compareSemver(a.version, b.version) })
	return rs, nil
}

// get fetches url, failing on any status but 200.
func (c *npmCache) get(url string) ([]byte, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "paddock-replay-test")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 256<<20))
}

// tarballFile is where r's verified tarball is cached.
func (c *npmCache) tarballFile(r npmRelease) string {
	return filepath.Join(c.dir, c.pkg+"-"+r.version+".tgz")
}

// tarballs makes sure every release's tarball is cached and verified,
// downloading the missing ones a few at a time; it returns how many were
// downloaded.
func (c *npmCache) tarballs(rs []npmRelease) (int, error) {
	var missing []npmRelease
	for _, r := range rs {
		if _, err := c.tarball(r, false); err != nil {
			missing = append(missing, r)
		}
	}
	var g errgroup.Group
	g.SetLimit(8)
	for _, r := range missing {
		g.Go(func() error {
			data, err := c.get(r.tarball)
			if err != nil {
				return err
			}
			if err := verifyTarball(r, data); err != nil {
				return fmt.Errorf("%s: %w", r.tarball, err)
			}
			return vfs.WriteFileAtomic(vfs.OS, c.tarballFile(r), data, 0o644, true)
		})
	}
	return len(missing), g.Wait()
}

// tarball returns r's cached tarball after checking it again; a corrupt
// cached file is removed when remove is set.
func (c *npmCache) tarball(r npmRelease, remove bool) ([]byte, error) {
	file := c.tarballFile(r)
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if err := verifyTarball(r, data); err != nil {
		if remove {
			os.Remove(file)
		}
		return nil, fmt.Errorf("%s: %w (removed; run again to download it)", file, err)
	}
	return data, nil
}

// verifyTarball checks data against the release's SRI integrity (any
// sha512 entry) or, for releases without one, its sha1 shasum.
func verifyTarball(r npmRelease, data []byte) error {
	for _, sri := range strings.Fields(r.integrity) {
		algo, digest, ok := strings.Cut(sri, "-")
		if !ok || algo != "sha512" {
			continue
		}
		digest, _, _ = strings.Cut(digest, "?")
		want, err := base64.StdEncoding.DecodeString(digest)
		if err != nil {
			return fmt.Errorf("integrity %q: %w", sri, err)
		}
		if got := sha512.Sum512(data); !bytes.Equal(got[:], want) {
			return fmt.Errorf("sha512 is %s, want %s", base64.StdEncoding.EncodeToString(got[:]), digest)
		}
		return nil
	}
	if r.shasum == "" {
		return fmt.Errorf("no sha512 integrity and no shasum to check against (integrity %q)", r.integrity)
	}
	if got := sha1.Sum(data); hex.EncodeToString(got[:]) != strings.ToLower(r.shasum) {
		return fmt.Errorf("sha1 is %x, want %s", got, r.shasum)
	}
	return nil
}

// npmFile is one file of an unpacked release.
type npmFile struct {
	name string // slash-separated, relative to the package root
	exec bool
	data []byte
}

// unpackTarball reads a release tarball (tar in gzip) the way npm does: the
// first path element (normally "package/") is the package root, later
// duplicates win, only regular files are kept (links and devices are
// skipped, as npm's extractor does). An absolute or escaping path, or one
// naming .git, is an error.
func unpackTarball(data []byte) ([]npmFile, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	files := map[string]npmFile{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeRegA {
			continue
		}
		name := strings.ReplaceAll(h.Name, "\\", "/")
		if strings.HasPrefix(name, "/") || strings.ContainsRune(name, 0) {
			return nil, fmt.Errorf("tar entry %q: absolute or invalid path", h.Name)
		}
		_, rel, ok := strings.Cut(name, "/")
		rel = path.Clean(rel)
		if !ok || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			return nil, fmt.Errorf("tar entry %q: path outside the package root", h.Name)
		}
		for _, el := range strings.Split(rel, "/") {
			if strings.EqualFold(el, ".git") {
				return nil, fmt.Errorf("tar entry %q: names a .git directory", h.Name)
			}
		}
		b, err := io.ReadAll(io.LimitReader(tr, 64<<20))
		if err != nil {
			return nil, fmt.Errorf("tar entry %q: %w", h.Name, err)
		}
		files[rel] = npmFile{name: rel, exec: h.Mode&0o100 != 0, data: b}
	}
	// A file and a directory of the same name cannot both be in a tree.
	out := make([]npmFile, 0, len(files))
	for _, f := range files {
		for p := path.Dir(f.name); p != "."; p = path.Dir(p) {
			if _, ok := files[p]; ok {
				return nil, fmt.Errorf("%q is both a file and a directory", p)
			}
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b npmFile) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// buildReleaseRepo makes repo a git repository with one commit per
// release, oldest first, through git fast-import (exact bytes and modes,
// no .gitignore or attribute processing on the way in), and returns the
// commits and their versions.
func buildReleaseRepo(t *testing.T, repo string, c *npmCache, rs []npmRelease) (commits, labels []string) {
	t.Helper()
	runGit(t, repo, nil, "init", "-q")
	cmd := exec.Command("git", "fast-import", "--quiet", "--done")
	cmd.Dir = repo
	cmd.Env = gitEnv(t, repo)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(in, 1<<20)
	werr := func() error {
		for i, r := range rs {
			data, err := c.tarball(r, true)
			if err != nil {
				return err
			}
			files, err := unpackTarball(data)
			if err != nil {
				return fmt.Errorf("%s@%s: %w", c.pkg, r.version, err)
			}
			msg := c.pkg + "@" + r.version + "\n"
			fmt.Fprintf(w, "commit refs/heads/replay\nmark :%d\ncommitter t <t@example.com> %d +0000\ndata %d\n%s", i+1, 1700000000+i, len(msg), msg)
			if i > 0 {
				fmt.Fprintf(w, "from :%d\n", i)
			}
			w.WriteString("deleteall\n")
			for _, f := range files {
				mode := "100644"
				if f.exec {
					mode = "100755"
				}
				fmt.Fprintf(w, "M %s inline %s\ndata %d\n", mode, fastImportPath(f.name), len(f.data))
				w.Write(f.data)
				w.WriteString("\n")
			}
			w.WriteString("\n")
			labels = append(labels, r.version)
		}
		w.WriteString("done\n")
		return w.Flush()
	}()
	in.Close()
	if err := cmd.Wait(); err != nil || werr != nil {
		t.Fatalf("git fast-import: %v; %v: %s", werr, err, stderr.String())
	}
	commits = strings.Fields(string(runGit(t, repo, nil, "rev-list", "--reverse", "--first-parent", "refs/heads/replay")))
	if len(commits) != len(rs) {
		t.Fatalf("fast-import made %d commits for %d releases", len(commits), len(rs))
	}
	return commits, labels
}

// fastImportPath quotes p for a fast-import M command when it needs it, in
// git's C style (bytes at or above 0x80 may stay raw inside the quotes).
func fastImportPath(p string) string {
	if !strings.ContainsAny(p, "\"\\\n") && !strings.HasPrefix(p, "\"") && !strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch ch := p[i]; {
		case ch == '"' || ch == '\\':
			b.WriteByte('\\')
			b.WriteByte(ch)
		case ch < 0x20 || ch == 0x7f:
			fmt.Fprintf(&b, "\\%03o", ch)
		default:
			b.WriteByte(ch)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// semver is a parsed semantic version.
type semver struct {
	nums [3]uint64
	pre  []string // dot-separated pre-release identifiers
}

// parseSemver parses "MAJOR.MINOR.PATCH[-PRE][+BUILD]" (a leading "v" or
// "=" is allowed, as npm allows it).
func parseSemver(s string) (semver, bool) {
	var v semver
	s = strings.TrimLeft(s, "v=")
	s, _, _ = strings.Cut(s, "+")
	core, pre, hasPre := strings.Cut(s, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return v, false
		}
		v.nums[i] = n
	}
	if hasPre {
		if pre == "" {
			return v, false
		}
		v.pre = strings.Split(pre, ".")
	}
	return v, true
}

// compareSemver orders versions by semantic-version precedence, ties
// broken by the strings (builds).
func compareSemver(a, b string) int {
	va, _ := parseSemver(a)
	vb, _ := parseSemver(b)
	for i := range va.nums {
		if va.nums[i] != vb.nums[i] {
			if va.nums[i] < vb.nums[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(va.pre) == 0 && len(vb.pre) > 0:
		return 1
	case len(va.pre) > 0 && len(vb.pre) == 0:
		return -1
	}
	for i := 0; i < len(va.pre) && i < len(vb.pre); i++ {
		x, y := va.pre[i], vb.pre[i]
		nx, ex := strconv.ParseUint(x, 10, 64)
		ny, ey := strconv.ParseUint(y, 10, 64)
		switch {
		case ex == nil && ey == nil:
			if nx != ny {
				if nx < ny {
					return -1
				}
				return 1
			}
		case ex == nil:
			return -1
		case ey == nil:
			return 1
		default:
			if c := strings.Compare(x, y); c != 0 {
				return c
			}
		}
	}
	if c := len(va.pre) - len(vb.pre); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// TestNPMHelpers checks the replay's own parts without the network:
// version order, tarball checks, unsafe tar paths, fast-import quoting.
func TestNPMHelpers(t *testing.T) {
	order := []string{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.2.0", "1.10.0", "2.0.0"}
	shuffled := slices.Clone(order)
	slices.Reverse(shuffled)
	slices.SortFunc(shuffled, compareSemver)
	if !slices.Equal(shuffled, order) {
		t.Errorf("semver order %v, want %v", shuffled, order)
	}
	if _, ok := parseSemver("1.2"); ok {
		t.Error("1.2 parsed as a semantic version")
	}

	tgz := func(entries ...*tar.Header) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		for _, h := range entries {
			body := []byte("x")
			if h.Typeflag == tar.TypeReg {
				h.Size = int64(len(body))
			}
			if err := tw.WriteHeader(h); err != nil {
				t.Fatal(err)
			}
			if h.Typeflag == tar.TypeReg {
				tw.Write(body)
			}
		}
		tw.Close()
		zw.Close()
		return buf.Bytes()
	}
	reg := func(name string, mode int64) *tar.Header {
		return &tar.Header{Name: name, Mode: mode, Typeflag: tar.TypeReg}
	}
	good := tgz(reg("package/a.js", 0o644), reg("package/bin/x", 0o755),
		&tar.Header{Name: "package/link", Linkname: "../../etc/passwd", Typeflag: tar.TypeSymlink}, reg("package/a.js", 0o644))
	files, err := unpackTarball(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].name != "a.js" || files[0].exec || files[1].name != "bin/x" || !files[1].exec {
		t.Errorf("unpacked %+v, want a.js and executable bin/x", files)
	}
	for _, bad := range []string{"/etc/passwd", "package/../../x", "package/../x", "package/.git/hooks/pre-commit", "package/a/.GIT/config", "package"} {
		if _, err := unpackTarball(tgz(reg(bad, 0o644))); err == nil {
			t.Errorf("tar entry %q accepted", bad)
		}
	}
	if _, err := unpackTarball(tgz(reg("package/a", 0o644), reg("package/a/b", 0o644))); err == nil {
		t.Error("a file and a directory of the same name accepted")
	}

	sum := sha512.Sum512(good)
	sha := sha1.Sum(good)
	r := npmRelease{integrity: "sha512-" + base64.StdEncoding.EncodeToString(sum[:])}
	if err := verifyTarball(r, good); err != nil {
		t.Error(err)
	}
	if err := verifyTarball(r, append(slices.Clone(good), 0)); err == nil {
		t.Error("a changed tarball passed its sha512 check")
	}
	r = npmRelease{shasum: hex.EncodeToString(sha[:])}
	if err := verifyTarball(r, good); err != nil {
		t.Error(err)
	}
	if err := verifyTarball(r, good[1:]); err == nil {
		t.Error("a changed tarball passed its sha1 check")
	}
	if err := verifyTarball(npmRelease{integrity: "sha256-AAAA"}, good); err == nil {
		t.Error("a tarball with no usable checksum passed")
	}

	if got := fastImportPath(`a "b"\c` + "\n"); got != `"a \"b\"\\c\012"` {
		t.Errorf("fastImportPath = %s", got)
	}
	if got := fastImportPath("héllo world.js"); got != "héllo world.js" {
		t.Errorf("fastImportPath = %s", got)
	}
	if validNPMName("../etc") || validNPMName("@scope/x") || !validNPMName("yargs") {
		t.Error("validNPMName accepts an unsafe name or refuses yargs")
	}
}
