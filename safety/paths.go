package safety

import (
	"path"
	"strings"
)

// normPath returns p cleaned, with the home directory written as "~", and
// relative paths joined to cwd when cwd is absolute.
func (w *walker) normPath(p string) string {
	if p == "" {
		return p
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		return path.Clean(p)
	}
	if !strings.HasPrefix(p, "/") && strings.HasPrefix(w.cwd, "/") {
		p = w.cwd + "/" + p
	}
	if strings.HasPrefix(p, "/") {
		p = path.Clean(p)
		if h := w.a.home; h != "" && h != "/" && (p == h || strings.HasPrefix(p, h+"/")) {
			return "~" + p[len(h):]
		}
		return p
	}
	return path.Clean(p)
}

var startupFiles = []string{
	"~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.profile", "~/.bash_logout",
	"~/.zshrc", "~/.zshenv", "~/.zprofile", "~/.zlogin", "~/.config/fish", "~/.inputrc",
	"/etc/profile", "/etc/bash.bashrc", "/etc/zsh", "/etc/environment", "~/.config/autostart",
	"~/.xinitrc", "~/.xprofile", "~/.pam_environment",
}

var systemDirs = []string{"/etc", "/usr", "/bin", "/sbin", "/boot", "/lib", "/lib32", "/lib64", "/sys", "/proc", "/root", "/var/spool/cron", "/var/lib", "/System", "/Library", "/private/etc", "/opt"}

func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// hasComponents reports whether p contains the slash-separated component
// sequence seq (e.g. ".git/hooks").
func hasComponents(p, seq string) bool {
	return p == seq || strings.HasPrefix(p, seq+"/") || strings.Contains(p, "/"+seq+"/") || strings.HasSuffix(p, "/"+seq)
}

// credentialPath reports whether p names a credential file, and what kind.
func credentialPath(p string) (string, bool) {
	base := path.Base(p)
	switch {
	case base == ".env" || strings.HasPrefix(base, ".env.") && base != ".env.example" && base != ".env.sample" && base != ".env.template":
		return ".env file", true
	case strings.HasPrefix(base, "id_rsa") || strings.HasPrefix(base, "id_dsa") || strings.HasPrefix(base, "id_ecdsa") || strings.HasPrefix(base, "id_ed25519"):
		return "SSH private key", true
	case under(p, "~/.ssh") || hasComponents(p, ".ssh"):
		return "~/.ssh", true
	case under(p, "~/.aws") || hasComponents(p, ".aws"):
		return "AWS credentials", true
	case under(p, "~/.gnupg"), under(p, "~/.config/gh"), under(p, "~/.kube"), under(p, "~/.docker"), under(p, "~/.azure"), under(p, "~/.config/gcloud"):
		return "credential store " + p, true
	case base == ".netrc" || base == ".git-credentials" || base == ".npmrc" || base == ".pypirc" || base == "credentials.json" || base == ".pgpass":
		return base, true
	case strings.HasSuffix(base, ".pem") || strings.HasSuffix(base, ".key") || strings.HasSuffix(base, ".p12") || strings.HasSuffix(base, ".pfx"):
		return "private key file", true
	case p == "/etc/shadow" || p == "/etc/gshadow" || p == "/etc/sudoers" || under(p, "/etc/ssh"):
		return p, true
	}
	return "", false
}

// read records that seg reads p.
func (w *walker) read(seg *Segment, p string) {
	n := w.normPath(p)
	seg.Reads = append(seg.Reads, p)
	if kind, ok := credentialPath(n); ok {
		seg.find(High, CatCredentials, "reads credentials: "+kind)
		w.credRead = true
		if w.credReason == "" {
			w.credReason = kind
		}
	}
}

// write records that seg writes p and judges the target.
func (w *walker) write(seg *Segment, p string) {
	seg.Writes = append(seg.Writes, p)
	n := w.normPath(p)
	switch {
	case n == "/dev/null" || n == "/dev/stdout" || n == "/dev/stderr" || n == "/dev/tty" || under(n, "/dev/fd"):
		return
	case under(n, "/dev/tcp") || under(n, "/dev/udp"):
		w.network = true
		seg.find(Critical, CatExfiltration, "opens a network connection through "+n+" (reverse shell or exfiltration)")
		return
	case under(n, "/dev"):
		seg.find(Critical, CatDestructive, "writes to the device "+n)
		return
	}
	for _, f := range startupFiles {
		if under(n, f) {
			seg.find(Critical, CatPersistence, "writes the shell startup file "+n)
			return
		}
	}
	switch {
	case under(n, "~/.ssh") || hasComponents(n, ".ssh"):
		seg.find(Critical, CatPersistence, "writes into ~/.ssh")
		return
	case hasComponents(n, ".git/hooks"):
		seg.find(Critical, CatPersistence, "writes a git hook (runs on later git commands)")
		return
	case strings.HasSuffix(n, ".git/config") || n == ".git/config" || under(n, "~/.gitconfig"):
		seg.find(High, CatCodeExecution, "writes git configuration (can make git run programs)")
		return
	}
	for _, d := range systemDirs {
		if under(n, d) {
			seg.find(Critical, CatDestructive, "writes the system path "+n)
			return
		}
	}
	if kind, ok := credentialPath(n); ok {
		seg.find(High, CatCredentials, "writes a credential file: "+kind)
		return
	}
	seg.find(Medium, CatWrite, "writes files")
}

// criticalTarget reports whether deleting or changing recursively the tree
// at p would destroy the system or the user's home.
func (w *walker) criticalTarget(p string) bool {
	if p == "" {
		return false
	}
	n := w.normPath(strings.TrimSuffix(p, "/*"))
	if p == "/*" || p == "~/*" || p == "~/.*" {
		return true
	}
	if n == "/" || n == "~" || n == "/home" || n == "/Users" || n == "~/.ssh" || n == "~/.config" {
		return true
	}
	for _, d := range systemDirs {
		if n == d {
			return true
		}
	}
	switch n {
	case "/var", "/dev", "/srv", "/mnt", "/media", "/Applications", "/private":
		return true
	}
	// Relative targets that resolve to the root or home through cwd.
	return false
}

// CredentialPath reports whether the path p names a credential file (.env,
// SSH keys, ~/.aws, .netrc, private keys, …) and which kind. p is judged as
// written; absolute paths under home are treated like ~/… paths.
func CredentialPath(p, home string) (kind string, ok bool) {
	w := &walker{a: &ShellAnalyzer{home: strings.TrimRight(home, "/")}}
	return credentialPath(w.normPath(p))
}
