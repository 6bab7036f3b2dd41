package agent

import (
	"strings"
	"testing"
)

// FuzzCheckURL checks that every repository address clone_repo accepts is
// neither an option nor a transport helper nor an unlisted scheme.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://github.com/a/b.git", "file:///tmp/x.git", "repos/demo", "git@github.com:a/b.git",
		"ext::sh -c id", "--upload-pack=id", "FTP://x", "HTTPS://x", "a::b", "-", "ssh://h/p", "fd::3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		if checkURL(u) != nil {
			return
		}
		if strings.HasPrefix(u, "-") || strings.Contains(u, "::") || strings.ContainsAny(u, "\x00\n\r") {
			t.Fatalf("checkURL(%q) accepted it", u)
		}
		if i := strings.Index(u, "://"); i >= 0 {
			switch strings.ToLower(u[:i]) {
			case "https", "http", "ssh", "git", "file":
			default:
				t.Fatalf("checkURL(%q) accepted scheme %q", u, u[:i])
			}
		}
	})
}

// FuzzDomainAllowed checks that a host is allowed only when it equals an
// entry or is a subdomain of a wildcard entry.
func FuzzDomainAllowed(f *testing.F) {
	for _, s := range [][2]string{{"example.com", "example.com"}, {"a.example.com", "*.example.com"}, {"evilexample.com", "*.example.com"},
		{"example.com", "*.example.com"}, {"EXAMPLE.com.", "example.com"}, {"127.0.0.1", "127.0.0.1"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, host, entry string) {
		if !domainAllowed(host, []string{entry}) {
			return
		}
		h := strings.ToLower(strings.TrimSuffix(host, "."))
		e := strings.ToLower(strings.TrimSuffix(entry, "."))
		if rest, ok := strings.CutPrefix(e, "*."); ok {
			if !strings.HasSuffix(h, "."+rest) {
				t.Fatalf("%q allowed by %q", host, entry)
			}
		} else if h != e {
			t.Fatalf("%q allowed by %q", host, entry)
		}
	})
}

func TestCheckURLAndRepoName(t *testing.T) {
	for _, tc := range []struct {
		url, name string
		ok        bool
	}{
		{"https://github.com/a/demo.git", "demo", true},
		{"https://github.com/a/demo/", "demo", true},
		{"git@github.com:a/demo.git", "demo", true},
		{"file:///tmp/x/demo.git", "demo", true},
		{"../repos/demo", "demo", true},
		{"ext::sh -c id", "", false},
		{"--upload-pack=id", "", false},
		{"gopher://h/x", "", false},
		{"https://h/x\nevil", "", false},
	} {
		err := checkURL(tc.url)
		if (err == nil) != tc.ok {
			t.Errorf("checkURL(%q) = %v, want ok %v", tc.url, err, tc.ok)
		}
		if tc.ok && repoName(tc.url) != tc.name {
			t.Errorf("repoName(%q) = %q, want %q", tc.url, repoName(tc.url), tc.name)
		}
	}
}
