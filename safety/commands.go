package safety

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"
)

// readOnly are commands that only read, given any arguments (their file
// arguments are still checked for credentials).
var readOnly = set("ls", "cat", "head", "tail", "less", "more", "wc", "grep", "egrep", "fgrep", "rg", "ag", "ack",
	"pwd", "echo", "printf", "true", "false", ":", "which", "type", "whoami", "id", "date", "uname", "hostname",
	"file", "stat", "du", "df", "tree", "diff", "cmp", "comm", "uniq", "cut", "tr", "nl", "basename", "dirname",
	"realpath", "readlink", "jq", "seq", "sleep", "ps", "test", "[", "column", "fold", "expand", "unexpand", "rev",
	"tac", "od", "hexdump", "strings", "md5sum", "sha1sum", "sha256sum", "sha512sum", "shasum", "cksum", "whereis",
	"uptime", "free", "cd", "pushd", "popd", "exit", "return", "shift", "wait", "jobs", "help", "man", "yes",
	"base64", "xxd", "set", "ulimit", "nproc", "getconf", "locale", "tput", "clear", "groups", "lsb_release",
	"sw_vers", "arch", "cal", "join", "paste", "fmt", "pr", "look", "iconv", "envsubst", "numfmt", "bc", "expr",
	"read", "unset", "sort", "lsof", "pgrep", "top", "htop", "vmstat", "iostat", "nslookup", "dig", "host", "ping")

// workspaceWriters change files in the workspace or run project code: the
// ordinary, reviewable work of a coding agent.
var workspaceWriters = set("touch", "mkdir", "cp", "mv", "ln", "rmdir", "unlink", "tee", "install", "patch", "tar",
	"unzip", "zip", "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "make", "cmake", "ninja", "cargo",
	"rustc", "rustup", "gcc", "g++", "cc", "c++", "clang", "clang++", "javac", "java", "mvn", "gradle", "dotnet",
	"pytest", "jest", "vitest", "mocha", "tsc", "eslint", "prettier", "black", "ruff", "mypy", "gofmt", "goimports",
	"golangci-lint", "staticcheck", "yarn", "pnpm", "npm", "npx", "pnpx", "bunx", "pip", "pip3", "pipx", "poetry",
	"uv", "bundle", "gem", "composer", "deno", "bun", "truncate", "split", "kill", "sort", "nvm", "tox", "nox",
	"bazel", "buck", "meson", "protoc", "swift", "xcodebuild", "flutter", "dart", "mix", "elixir", "erl", "ghc",
	"cabal", "stack", "sbt", "lein", "clojure", "zig", "terraform", "helm", "air", "wire", "sqlc", "buf", "git-lfs",
	"umask", "rake", "rails", "django-admin", "manage.py")

var shells = set("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox")

var interpreters = set("python", "python2", "python3", "node", "nodejs", "ruby", "perl", "php", "lua", "Rscript",
	"osascript", "pwsh", "powershell", "tclsh", "wish", "julia", "irb", "ipython")

var privileged = set("sudo", "doas", "pkexec", "su", "runuser", "chroot")

var system = set("shutdown", "reboot", "halt", "poweroff", "init", "telinit")

var accounts = set("useradd", "userdel", "usermod", "adduser", "deluser", "passwd", "chpasswd", "visudo", "groupadd",
	"groupdel", "gpasswd", "chsh")

var admin = set("mount", "umount", "swapon", "swapoff", "sysctl", "modprobe", "insmod", "rmmod", "iptables", "ip6tables",
	"nft", "ufw", "setenforce", "systemctl", "service", "launchctl", "chattr", "killall", "pkill", "crontab", "at",
	"batch", "dscl", "csrutil", "nvram", "diskutil", "losetup", "cryptsetup", "mdadm", "lvremove", "vgremove",
	"pvremove", "ifconfig", "route", "tc", "setcap")

var disk = set("mkfs", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "parted", "gdisk", "sgdisk",
	"format", "shred", "blkdiscard", "hdparm")

var rawNet = set("nc", "ncat", "netcat", "socat", "telnet", "openssl s_client", "cryptcat")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// command judges one simple command. argv[0] is the command name.
func (w *walker) command(seg *Segment, argv []arg, depth int, src string) {
	seg.Argv = argvStrings(argv)
	name0 := argv[0]
	if name0.dyn {
		seg.find(Unknown, CatUnknown, "the command name is only known at run time")
		return
	}
	for _, a := range argv {
		if a.dyn {
			continue
		}
		if msg := lookalike(a.s); msg != "" {
			seg.find(Unknown, CatUnknown, msg)
		}
	}
	name := name0.s
	if strings.Contains(name, "/") && !strings.HasSuffix(name, "/") {
		name = path.Base(name)
	}
	if !isASCII(name) {
		seg.find(Unknown, CatUnknown, fmt.Sprintf("the command name %q is not plain ASCII (a look-alike?)", name0.s))
		return
	}
	if strings.ContainsAny(name, "{}*?[") && name != "[" {
		seg.find(Unknown, CatUnknown, fmt.Sprintf("the command name %q expands (brace or glob)", name0.s))
		return
	}
	if w.funcs[name] {
		seg.find(Low, CatReadOnly, "calls a function defined in this command (its body is judged)")
		return
	}
	args := argv[1:]
	// Credential reads through any argument.
	if !metaOnly[name] {
		for _, a := range args {
			if a.dyn || strings.HasPrefix(a.s, "-") && !strings.Contains(a.s, "=") {
				continue
			}
			p := a.s
			if i := strings.IndexByte(p, '='); i >= 0 && strings.HasPrefix(p, "-") {
				p = p[i+1:]
			}
			if !mayBeCredential(p) {
				continue
			}
			if _, ok := credentialPath(w.normPath(strings.TrimPrefix(p, "@"))); ok {
				w.read(seg, p)
			}
		}
	}
	switch {
	case readOnly[name]:
		w.readOnlyCmd(seg, name, args)
	case name == "env":
		w.envCmd(seg, args, depth, src)
	case name == "timeout" || name == "nice" || name == "nohup" || name == "stdbuf" || name == "time" ||
		name == "exec" || name == "builtin" || name == "setsid" || name == "unbuffer" || name == "ionice" ||
		name == "command" || name == "caffeinate" || name == "chronic" || name == "taskset":
		w.wrapper(seg, name, args, depth, src)
	case privileged[name]:
		w.privileged(seg, name, args, depth, src)
	case name == "xargs":
		w.xargs(seg, args, depth, src)
	case name == "find":
		w.find(seg, args, depth, src)
	case name == "watch":
		w.watch(seg, args, depth)
	case shells[name]:
		w.shell(seg, name, args, depth)
	case name == "eval":
		w.eval(seg, args, depth)
	case name == "source" || name == ".":
		if len(args) > 0 && args[0].dyn {
			w.execHidden = true
			seg.find(High, CatCodeExecution, "sources shell code only known at run time")
		} else {
			seg.find(Unknown, CatCodeExecution, "runs a shell file whose contents are not analyzed")
		}
	case interpreters[name] || strings.HasPrefix(name, "python3.") || strings.HasPrefix(name, "python2."):
		w.interpreter(seg, name, args)
	case name == "rm":
		w.rm(seg, args)
	case name == "git":
		w.git(seg, args)
	case name == "go":
		w.goCmd(seg, args)
	case name == "sed":
		w.sed(seg, args)
	case name == "awk" || name == "gawk" || name == "mawk" || name == "nawk":
		w.awk(seg, args)
	case name == "dd":
		w.dd(seg, args)
	case name == "chmod" || name == "chown" || name == "chgrp":
		w.chmod(seg, name, args)
	case name == "curl" || name == "wget" || name == "http" || name == "https" || name == "aria2c" || name == "fetch":
		w.downloader(seg, name, args)
	case rawNet[name]:
		w.network = true
		risk := High
		for _, a := range args {
			if a.s == "-e" || a.s == "-c" || strings.HasPrefix(a.s, "EXEC:") || strings.HasPrefix(a.s, "SYSTEM:") || strings.Contains(a.s, "exec:") {
				risk = Critical
			}
		}
		seg.find(risk, CatNetwork, "opens a raw network connection with "+name)
	case name == "ssh" || name == "scp" || name == "sftp" || name == "rsync" || name == "ftp":
		w.network = true
		seg.find(Medium, CatNetwork, name+" uses the network")
		for _, a := range args[max(0, len(args)-1):] {
			if name != "ssh" && !a.dyn {
				w.write(seg, a.s)
			}
		}
		if name == "ssh" && len(positionals(args, "bcDEeFIiJLlmOopQRSWw")) > 1 {
			seg.find(High, CatCodeExecution, "runs a command on a remote host")
		}
	case system[name]:
		seg.find(Critical, CatDestructive, name+" stops or restarts the machine")
	case accounts[name]:
		seg.find(Critical, CatPrivilege, name+" changes system accounts")
	case disk[name] || strings.HasPrefix(name, "mkfs."):
		seg.find(Critical, CatDestructive, name+" destroys disk or file data")
	case admin[name]:
		w.admin(seg, name, args)
	case name == "history":
		if hasShort(args, "c") || hasShort(args, "w") || hasShort(args, "d") {
			seg.find(High, CatPersistence, "erases or rewrites the shell history")
		}
	case name == "alias" || name == "shopt" || name == "trap" || name == "enable" || name == "hash":
		seg.find(High, CatCodeExecution, name+" changes what later commands run")
	case name == "printenv" || name == "env":
		seg.find(Medium, CatCredentials, "prints the environment, which may hold secrets")
	case name == "docker" || name == "podman" || name == "nerdctl":
		w.docker(seg, args)
	case name == "kubectl" || name == "aws" || name == "gcloud" || name == "az" || name == "gh":
		w.network = true
		seg.find(Medium, CatNetwork, name+" talks to a remote service")
	case name == "openssl":
		if hasLong(args, "d") || hasShort(args, "d") {
			w.decode = true
		}
		seg.find(Medium, CatWrite, "openssl may write keys or files")
	case name == "gpg":
		if hasLong(args, "export-secret-keys") || hasLong(args, "export-secret-subkeys") {
			seg.find(High, CatCredentials, "exports secret keys")
		} else {
			seg.find(Medium, CatWrite, "gpg may change the keyring")
		}
	case workspaceWriters[name]:
		w.writer(seg, name, args)
	default:
		seg.find(Unknown, CatUnknown, fmt.Sprintf("unknown command %q", name))
	}
}

// metaOnly are commands that do not read the contents of their arguments.
var metaOnly = set("ls", "stat", "file", "du", "test", "[", "cd", "echo", "printf", "mkdir", "which", "basename", "dirname",
	"realpath", "readlink", "type", "pushd", "find", "tree")

func argvStrings(argv []arg) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = a.String()
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lookalike reports words that start with a character that looks like a
// dash or contain fullwidth or other confusable forms of ASCII.
func lookalike(s string) string {
	r, _ := utf8.DecodeRuneInString(s)
	switch r {
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212', '\uFE63', '\uFF0D', '\u00AD':
		return fmt.Sprintf("the argument %q starts with a look-alike of '-'", s)
	}
	for _, r := range s {
		if r >= 0xFF01 && r <= 0xFF5E || r == 0x00A0 || r == 0x2215 || r == 0x2044 || r == 0xFF0F {
			return fmt.Sprintf("the argument %q contains a look-alike of an ASCII character", s)
		}
	}
	return ""
}

// flagSet splits args into short flags, long flags (without "--" and any
// "=value") and positionals. "--" ends the flags.
type flagSet struct {
	short map[byte]bool
	long  map[string]bool
	pos   []arg
}

func parseFlags(args []arg) flagSet {
	fs := flagSet{short: map[byte]bool{}, long: map[string]bool{}}
	for i, a := range args {
		switch {
		case a.dyn:
			fs.pos = append(fs.pos, a)
		case a.s == "--":
			fs.pos = append(fs.pos, args[i+1:]...)
			return fs
		case strings.HasPrefix(a.s, "--"):
			n := a.s[2:]
			if j := strings.IndexByte(n, '='); j >= 0 {
				n = n[:j]
			}
			fs.long[n] = true
		case len(a.s) > 1 && a.s[0] == '-':
			for j := 1; j < len(a.s); j++ {
				fs.short[a.s[j]] = true
			}
		default:
			fs.pos = append(fs.pos, a)
		}
	}
	return fs
}

func hasShort(args []arg, c string) bool { return parseFlags(args).short[c[0]] }
func hasLong(args []arg, n string) bool  { return parseFlags(args).long[n] }

// positionals returns the non-flag arguments, skipping the values of the
// short flags in withValue.
func positionals(args []arg, withValue string) []arg {
	var out []arg
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.dyn || !strings.HasPrefix(a.s, "-") || a.s == "-" {
			out = append(out, a)
			continue
		}
		if a.s == "--" {
			return append(out, args[i+1:]...)
		}
		if len(a.s) == 2 && strings.IndexByte(withValue, a.s[1]) >= 0 {
			i++
		}
	}
	return out
}

// inner judges the command a wrapper runs, as a segment of its own when
// separate (find -exec, xargs, sudo) or in place.
func (w *walker) inner(seg *Segment, argv []arg, depth int, src string, separate bool) {
	if len(argv) == 0 {
		return
	}
	if !separate {
		w.command(seg, argv, depth, src)
		return
	}
	child := &Segment{Text: seg.Text, Offset: seg.Offset, Depth: depth}
	w.command(child, argv, depth, src)
	w.add(child)
}

func (w *walker) readOnlyCmd(seg *Segment, name string, args []arg) {
	switch name {
	case "sort":
		for i, a := range args {
			if a.s == "-o" && i+1 < len(args) {
				w.write(seg, args[i+1].s)
			} else if strings.HasPrefix(a.s, "--output=") {
				w.write(seg, strings.TrimPrefix(a.s, "--output="))
			}
		}
	case "base64":
		if hasShort(args, "d") || hasShort(args, "D") || hasLong(args, "decode") {
			w.decode = true
		}
	case "xxd":
		if hasShort(args, "r") {
			w.decode = true
		}
	case "unset":
		for _, a := range args {
			if a.s == "HISTFILE" {
				seg.find(High, CatPersistence, "unsets HISTFILE (hides the shell history)")
			}
		}
	case "ping", "dig", "nslookup", "host":
		w.network = true
	}
	seg.find(Low, CatReadOnly, name+" only reads")
}

func (w *walker) envCmd(seg *Segment, args []arg, depth int, src string) {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			seg.find(Unknown, CatUnknown, "env with an argument only known at run time")
			return
		}
		switch {
		case a.s == "-i" || a.s == "-0" || a.s == "--ignore-environment" || a.s == "--null" || a.s == "-":
		case a.s == "-u" || a.s == "-C" || a.s == "--unset" || a.s == "--chdir":
			i++
		case a.s == "-S" || a.s == "--split-string" || strings.HasPrefix(a.s, "-S") || strings.HasPrefix(a.s, "--split-string="):
			s := strings.TrimPrefix(strings.TrimPrefix(a.s, "--split-string="), "-S")
			if s == "" || a.s == "--split-string" {
				if i+1 >= len(args) {
					return
				}
				s = args[i+1].s
			}
			w.nested(seg, s, depth)
			return
		case strings.HasPrefix(a.s, "-"):
			seg.find(Unknown, CatUnknown, "env with an unknown option "+a.s)
			return
		case strings.Contains(a.s, "="):
			w.envAssign(seg, a.s[:strings.IndexByte(a.s, '=')])
		default:
			w.inner(seg, args[i:], depth, src, false)
			return
		}
	}
	seg.find(Medium, CatCredentials, "prints the environment, which may hold secrets")
}

// wrapper looks through commands that run their arguments as a command.
func (w *walker) wrapper(seg *Segment, name string, args []arg, depth int, src string) {
	i := 0
	skipOpts := func(withValue string) {
		for i < len(args) && !args[i].dyn && strings.HasPrefix(args[i].s, "-") && len(args[i].s) > 1 {
			if args[i].s == "--" {
				i++
				return
			}
			if len(args[i].s) == 2 && strings.IndexByte(withValue, args[i].s[1]) >= 0 {
				i++
			}
			i++
		}
	}
	switch name {
	case "timeout":
		skipOpts("sk")
		i++ // the duration
	case "nice":
		skipOpts("n")
	case "stdbuf":
		skipOpts("ioe")
	case "ionice":
		skipOpts("cnpP")
	case "taskset":
		skipOpts("")
		i++ // the mask
	case "command":
		if hasShort(args, "v") || hasShort(args, "V") {
			seg.find(Low, CatReadOnly, "command -v only looks up a name")
			return
		}
		skipOpts("")
	default:
		skipOpts("")
	}
	if i >= len(args) {
		seg.find(Low, CatReadOnly, name+" with nothing to run")
		return
	}
	w.inner(seg, args[i:], depth, src, false)
}

func (w *walker) privileged(seg *Segment, name string, args []arg, depth int, src string) {
	seg.find(High, CatPrivilege, "runs with another user's privileges ("+name+")")
	withValue := map[string]string{"sudo": "ugpCDhrtTU", "doas": "uCa", "su": "csg", "runuser": "ugc", "chroot": "", "pkexec": "u"}[name]
	i := 0
	for i < len(args) && !args[i].dyn && strings.HasPrefix(args[i].s, "-") {
		if args[i].s == "--" {
			i++
			break
		}
		if (name == "su" || name == "runuser") && args[i].s == "-c" && i+1 < len(args) {
			w.nested(seg, args[i+1].s, depth)
			return
		}
		if len(args[i].s) == 2 && strings.IndexByte(withValue, args[i].s[1]) >= 0 {
			i++
		}
		i++
	}
	if name == "chroot" && i < len(args) {
		i++
	}
	if name == "su" || name == "runuser" || i >= len(args) {
		seg.find(High, CatPrivilege, "opens a privileged shell")
		return
	}
	w.inner(seg, args[i:], depth, src, true)
}

func (w *walker) xargs(seg *Segment, args []arg, depth int, src string) {
	i := 0
	for i < len(args) && !args[i].dyn && strings.HasPrefix(args[i].s, "-") {
		s := args[i].s
		if s == "--" {
			i++
			break
		}
		if len(s) == 2 && strings.IndexByte("nILPdEsa", s[1]) >= 0 {
			i++
		}
		i++
	}
	inner := []arg{{s: "echo"}}
	if i < len(args) {
		inner = append(append([]arg{}, args[i:]...), arg{dyn: true})
	}
	seg.find(Low, CatReadOnly, "xargs runs a command on its input (judged separately)")
	w.inner(seg, inner, depth, src, true)
}

func (w *walker) find(seg *Segment, args []arg, depth int, src string) {
	var roots []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a.s {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			var inner []arg
			for ; j < len(args) && args[j].s != ";" && args[j].s != "+"; j++ {
				if args[j].s == "{}" {
					inner = append(inner, arg{dyn: true})
				} else {
					inner = append(inner, args[j])
				}
			}
			if len(inner) == 0 {
				seg.find(Unknown, CatUnknown, "find "+a.s+" without a command")
			}
			w.inner(seg, inner, depth, src, true)
			i = j
		case "-delete":
			risk := High
			for _, r := range roots {
				if w.criticalTarget(r) {
					risk = Critical
				}
			}
			seg.find(risk, CatDestructive, "find -delete removes files")
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				w.write(seg, args[i+1].s)
			}
		default:
			if !a.dyn && !strings.HasPrefix(a.s, "-") && len(roots) == i {
				roots = append(roots, a.s)
			}
		}
	}
	seg.find(Low, CatReadOnly, "find only reads")
}

func (w *walker) watch(seg *Segment, args []arg, depth int) {
	i := 0
	for i < len(args) && !args[i].dyn && strings.HasPrefix(args[i].s, "-") {
		if len(args[i].s) == 2 && strings.IndexByte("nq", args[i].s[1]) >= 0 {
			i++
		}
		i++
	}
	var parts []string
	for _, a := range args[i:] {
		if a.dyn {
			seg.find(Unknown, CatUnknown, "watch runs a command only known at run time")
			return
		}
		parts = append(parts, a.s)
	}
	w.nested(seg, strings.Join(parts, " "), depth)
}

// nested analyzes a string the shell will parse again (bash -c, eval).
func (w *walker) nested(seg *Segment, s string, depth int) {
	seg.find(Low, CatReadOnly, "runs a nested command line (judged separately)")
	w.analyze(s, depth+1, 0)
}

func (w *walker) shell(seg *Segment, name string, args []arg, depth int) {
	script, code := -1, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			if code {
				w.execHidden = true
				seg.find(High, CatCodeExecution, name+" -c runs a command only known at run time")
				return
			}
			script = i
			break
		}
		if a.s == "--" {
			if i+1 < len(args) {
				script = i + 1
			}
			break
		}
		if a.s == "-o" || a.s == "+o" || a.s == "-O" || a.s == "+O" || a.s == "--rcfile" || a.s == "--init-file" {
			i++
			continue
		}
		if strings.HasPrefix(a.s, "-") || strings.HasPrefix(a.s, "+") {
			if !strings.HasPrefix(a.s, "--") && strings.Contains(a.s, "c") {
				code = true
			}
			if a.s == "-s" || a.s == "-" {
				break
			}
			continue
		}
		script = i
		break
	}
	switch {
	case code && script >= 0:
		w.nested(seg, args[script].s, depth)
	case code:
		seg.find(Unknown, CatUnknown, name+" -c without a command")
	case script >= 0 && args[script].dyn:
		w.execHidden = true
		seg.find(High, CatCodeExecution, name+" runs a script only known at run time (e.g. <(curl …))")
	case script >= 0:
		seg.find(Unknown, CatCodeExecution, name+" runs a script file whose contents are not analyzed")
	case w.stdin != nil:
		in := *w.stdin
		w.stdin = nil
		seg.find(Low, CatReadOnly, name+" runs its here-document (judged separately)")
		w.analyze(in, depth+1, 0)
	default:
		w.execHidden = true
		seg.find(High, CatCodeExecution, name+" runs commands from its input, which the analyzer cannot see")
	}
}

func (w *walker) eval(seg *Segment, args []arg, depth int) {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		if a.dyn {
			w.execHidden = true
			seg.find(High, CatCodeExecution, "eval runs a command only known at run time")
			return
		}
		parts = append(parts, a.s)
	}
	w.nested(seg, strings.Join(parts, " "), depth)
}

func (w *walker) interpreter(seg *Segment, name string, args []arg) {
	for i, a := range args {
		if a.dyn {
			w.execHidden = true
			seg.find(High, CatCodeExecution, name+" runs code only known at run time")
			return
		}
		switch a.s {
		case "-c", "-e", "-E", "--eval", "-r", "-p", "--print", "-x":
			if name == "perl" && a.s == "-p" {
				continue
			}
			if i+1 < len(args) && args[i+1].dyn {
				w.execHidden = true
				seg.find(High, CatCodeExecution, name+" runs inline code only known at run time")
				return
			}
			seg.find(Unknown, CatCodeExecution, name+" runs inline code that is not analyzed")
			return
		case "-m":
			seg.find(Medium, CatCodeExecution, name+" runs a module")
			return
		case "-V", "--version", "-h", "--help":
			seg.find(Low, CatReadOnly, name+" prints its version or help")
			return
		case "-":
			w.execHidden = true
			seg.find(High, CatCodeExecution, name+" runs code from its input")
			return
		}
		if strings.HasPrefix(a.s, "-") {
			if name == "perl" && strings.ContainsAny(a.s[1:], "eE") {
				seg.find(Unknown, CatCodeExecution, name+" runs inline code that is not analyzed")
				return
			}
			continue
		}
		seg.find(Medium, CatCodeExecution, name+" runs a program file of the project")
		return
	}
	w.execHidden = true
	seg.find(High, CatCodeExecution, name+" runs code from its input, which the analyzer cannot see")
}

func (w *walker) rm(seg *Segment, args []arg) {
	fs := parseFlags(args)
	recursive := fs.short['r'] || fs.short['R'] || fs.long["recursive"]
	force := fs.short['f'] || fs.long["force"]
	for _, p := range fs.pos {
		if !p.dyn {
			seg.Writes = append(seg.Writes, p.s)
		}
	}
	if fs.long["no-preserve-root"] {
		seg.find(Critical, CatDestructive, "rm --no-preserve-root")
	}
	for _, p := range fs.pos {
		if !p.dyn && w.criticalTarget(p.s) && (recursive || strings.HasSuffix(p.s, "*")) {
			seg.find(Critical, CatDestructive, fmt.Sprintf("rm deletes %q (system or home directory)", p.s))
		}
		if !p.dyn {
			n := w.normPath(p.s)
			if hasComponents(n, ".git") || strings.HasSuffix(n, "/.git") || n == ".git" {
				seg.find(High, CatDestructive, "rm deletes git history")
			}
			if under(n, "~/.ssh") {
				seg.find(Critical, CatDestructive, "rm deletes ~/.ssh")
			}
		}
	}
	switch {
	case recursive && force:
		for _, p := range fs.pos {
			if p.dyn {
				seg.find(High, CatDestructive, "rm -rf of a path only known at run time")
			}
		}
		seg.find(High, CatDestructive, "rm with recursive and force deletes trees without asking")
	case recursive:
		seg.find(High, CatDestructive, "rm -r deletes directory trees")
	default:
		seg.find(Medium, CatWrite, "rm deletes files")
	}
}

func (w *walker) git(seg *Segment, args []arg) {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			seg.find(Unknown, CatUnknown, "git with an argument only known at run time")
			return
		}
		switch {
		case a.s == "-C" || a.s == "--git-dir" || a.s == "--work-tree" || a.s == "--namespace":
			i++
			continue
		case a.s == "-c" || strings.HasPrefix(a.s, "--config-env") || strings.HasPrefix(a.s, "--exec-path="):
			seg.find(High, CatCodeExecution, "git "+a.s+" can make git run any program (core.pager, core.sshCommand, …)")
			i++
			continue
		case strings.HasPrefix(a.s, "-"):
			continue
		}
		break
	}
	if i >= len(args) {
		seg.find(Low, CatReadOnly, "git without a subcommand")
		return
	}
	sub, rest := args[i].s, args[i+1:]
	for _, a := range rest {
		if strings.HasPrefix(a.s, "--upload-pack") || strings.HasPrefix(a.s, "--receive-pack") || strings.HasPrefix(a.s, "ext::") ||
			strings.HasPrefix(a.s, "--exec=") || a.s == "--exec" {
			seg.find(High, CatCodeExecution, "git option "+a.s+" runs a program")
		}
	}
	fs := parseFlags(rest)
	switch sub {
	case "status", "log", "diff", "show", "blame", "rev-parse", "ls-files", "ls-tree", "grep", "describe",
		"shortlog", "cat-file", "help", "version", "whatchanged", "for-each-ref", "merge-base", "name-rev",
		"show-ref", "count-objects", "rev-list", "reflog", "check-ignore", "var", "annotate", "show-branch":
		if sub == "diff" && (fs.long["output"] || fs.short['o']) {
			seg.find(Medium, CatWrite, "git diff --output writes a file")
		}
		if sub == "reflog" && len(fs.pos) > 0 && (fs.pos[0].s == "expire" || fs.pos[0].s == "delete") {
			seg.find(High, CatDestructive, "git reflog "+fs.pos[0].s+" drops history")
			return
		}
		seg.find(Low, CatReadOnly, "git "+sub+" only reads")
	case "branch", "tag", "remote", "stash", "config", "worktree", "submodule", "notes":
		readOnlyForm := len(fs.pos) == 0 && !fs.short['d'] && !fs.short['D'] && !fs.short['m'] && !fs.short['M'] && !fs.long["delete"]
		if sub == "stash" {
			readOnlyForm = len(fs.pos) > 0 && (fs.pos[0].s == "list" || fs.pos[0].s == "show")
		}
		if sub == "remote" && len(fs.pos) > 0 && fs.pos[0].s == "show" {
			readOnlyForm = true
		}
		if sub == "config" {
			readOnlyForm = fs.long["get"] || fs.long["list"] || fs.short['l'] || fs.long["get-all"] || len(fs.pos) == 1
			for _, p := range fs.pos {
				k := strings.ToLower(p.s)
				if len(fs.pos) > 1 && (strings.HasPrefix(k, "alias.") || strings.HasPrefix(k, "core.") ||
					strings.Contains(k, "sshcommand") || strings.HasPrefix(k, "include") || strings.Contains(k, ".helper")) {
					seg.find(High, CatCodeExecution, "git config "+p.s+" can make git run programs")
				}
			}
		}
		if readOnlyForm {
			seg.find(Low, CatReadOnly, "git "+sub+" only lists")
		} else {
			seg.find(Medium, CatWrite, "git "+sub+" changes the repository")
		}
	case "push":
		w.network = true
		force := fs.short['f'] || fs.long["force"] || fs.long["force-with-lease"] || fs.long["mirror"] || fs.long["delete"] || fs.short['d']
		for _, p := range fs.pos {
			if strings.HasPrefix(p.s, "+") || strings.HasPrefix(p.s, ":") {
				force = true
			}
		}
		if force {
			seg.find(High, CatDestructive, "git push rewrites or deletes remote history")
		} else {
			seg.find(Medium, CatNetwork, "git push publishes commits")
		}
	case "reset":
		if fs.long["hard"] || fs.long["merge"] || fs.long["keep"] {
			seg.find(High, CatDestructive, "git reset --hard discards uncommitted work")
		} else {
			seg.find(Medium, CatWrite, "git reset moves the branch")
		}
	case "clean":
		if fs.short['f'] || fs.long["force"] {
			seg.find(High, CatDestructive, "git clean -f deletes untracked files")
		} else {
			seg.find(Low, CatReadOnly, "git clean without -f only lists")
		}
	case "checkout", "restore":
		discard := false
		for _, p := range fs.pos {
			if p.s == "." || p.s == "*" || p.s == ":/" {
				discard = true
			}
		}
		if discard || fs.short['f'] || fs.long["force"] {
			seg.find(High, CatDestructive, "git "+sub+" discards uncommitted changes")
		} else {
			seg.find(Medium, CatWrite, "git "+sub+" changes the working tree")
		}
	case "filter-branch", "filter-repo", "update-ref", "gc", "prune", "replace":
		seg.find(High, CatDestructive, "git "+sub+" rewrites or drops history")
	case "clone", "fetch", "pull", "ls-remote", "archive", "send-email", "request-pull", "bundle":
		w.network = true
		seg.find(Medium, CatNetwork, "git "+sub+" uses the network")
	default:
		seg.find(Medium, CatWrite, "git "+sub+" changes the repository")
	}
}

func (w *walker) goCmd(seg *Segment, args []arg) {
	fs := parseFlags(args)
	if len(fs.pos) == 0 {
		seg.find(Low, CatReadOnly, "go without a command")
		return
	}
	switch sub := fs.pos[0].s; sub {
	case "version", "list", "doc", "vet", "help":
		seg.find(Low, CatReadOnly, "go "+sub+" only reads")
	case "env":
		if fs.short['w'] || fs.short['u'] {
			seg.find(Medium, CatWrite, "go env -w changes the go configuration")
		} else {
			seg.find(Low, CatReadOnly, "go env only reads")
		}
	case "get", "install", "mod":
		w.network = true
		seg.find(Medium, CatNetwork, "go "+sub+" downloads modules")
	default:
		seg.find(Medium, CatCodeExecution, "go "+sub+" builds or runs code")
	}
}

var sedSafe = regexp.MustCompile(`^\s*(([0-9]+|\$|/[^/]*/)(\s*,\s*([0-9]+|\$|/[^/]*/))?)?\s*!?\s*(p|d|q|Q|=|n|N|l|G|H|g|h|x|[0-9]*q)\s*$`)

func (w *walker) sed(seg *Segment, args []arg) {
	var scripts []string
	var files []arg
	inplace := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a.dyn:
			if len(scripts) == 0 {
				seg.find(Unknown, CatUnknown, "sed script only known at run time")
				return
			}
			files = append(files, a)
		case a.s == "-e" || a.s == "--expression":
			if i+1 < len(args) {
				scripts = append(scripts, args[i+1].s)
				i++
			}
		case strings.HasPrefix(a.s, "--expression="):
			scripts = append(scripts, strings.TrimPrefix(a.s, "--expression="))
		case a.s == "-f" || a.s == "--file":
			seg.find(Unknown, CatUnknown, "sed -f runs a script file that is not analyzed")
			return
		case strings.HasPrefix(a.s, "-i") || strings.HasPrefix(a.s, "--in-place") || (strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--") && strings.Contains(a.s, "i")):
			inplace = true
		case strings.HasPrefix(a.s, "-") && a.s != "-":
		default:
			if len(scripts) == 0 && !hasScriptFlag(args) {
				scripts = append(scripts, a.s)
			} else {
				files = append(files, a)
			}
		}
	}
	for _, s := range scripts {
		if !sedScriptSafe(s) {
			seg.find(Unknown, CatUnknown, fmt.Sprintf("sed script %q may write files or run commands", s))
			return
		}
	}
	if inplace {
		for _, f := range files {
			if !f.dyn {
				w.write(seg, f.s)
			}
		}
		seg.find(Medium, CatWrite, "sed -i edits files")
		return
	}
	seg.find(Low, CatReadOnly, "sed prints")
}

func hasScriptFlag(args []arg) bool {
	for _, a := range args {
		if a.s == "-e" || a.s == "--expression" || strings.HasPrefix(a.s, "--expression=") {
			return true
		}
	}
	return false
}

// sedScriptSafe accepts scripts made of print/delete/quit commands and
// s/// substitutions without the e or w flags.
func sedScriptSafe(script string) bool {
	for _, cmd := range splitSed(script) {
		cmd = strings.TrimSpace(cmd)
		if cmd == "" || sedSafe.MatchString(cmd) {
			continue
		}
		// Address prefix then s.
		j := 0
		for j < len(cmd) && strings.IndexByte("0123456789,$ ", cmd[j]) >= 0 {
			j++
		}
		if j >= len(cmd) || cmd[j] != 's' || j+1 >= len(cmd) {
			return false
		}
		d := cmd[j+1]
		if d == '\\' || d == '\n' || d == ' ' {
			return false
		}
		parts, k := 0, j+2
		for ; k < len(cmd) && parts < 2; k++ {
			if cmd[k] == '\\' {
				k++
				continue
			}
			if cmd[k] == d {
				parts++
			}
		}
		if parts < 2 {
			return false
		}
		for _, f := range cmd[k:] {
			if !strings.ContainsRune("gIip0123456789", f) {
				return false
			}
		}
	}
	return true
}

// splitSed splits a sed script on ';' and newlines outside s/// commands
// (approximately: a ';' inside a regex makes the script unsafe anyway).
func splitSed(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == '\n' })
}

func (w *walker) awk(seg *Segment, args []arg) {
	var prog string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			seg.find(Unknown, CatUnknown, "awk program only known at run time")
			return
		}
		if a.s == "-f" || strings.HasPrefix(a.s, "--file") {
			seg.find(Unknown, CatUnknown, "awk -f runs a program file that is not analyzed")
			return
		}
		if a.s == "-F" || a.s == "-v" {
			i++
			continue
		}
		if strings.HasPrefix(a.s, "-") {
			continue
		}
		prog = a.s
		break
	}
	if strings.Contains(prog, "system") || strings.Contains(prog, "|") || strings.Contains(prog, ">") ||
		strings.Contains(prog, "getline") || strings.Contains(prog, "ENVIRON") {
		seg.find(Unknown, CatCodeExecution, "awk program may run commands or write files")
		return
	}
	seg.find(Low, CatReadOnly, "awk prints")
}

func (w *walker) dd(seg *Segment, args []arg) {
	for _, a := range args {
		switch {
		case a.dyn:
			seg.find(Unknown, CatUnknown, "dd operand only known at run time")
		case strings.HasPrefix(a.s, "of="):
			w.write(seg, strings.TrimPrefix(a.s, "of="))
		case strings.HasPrefix(a.s, "if="):
			in := w.normPath(strings.TrimPrefix(a.s, "if="))
			if under(in, "/dev") && in != "/dev/zero" && in != "/dev/urandom" && in != "/dev/random" && in != "/dev/null" && in != "/dev/stdin" {
				seg.find(High, CatCredentials, "dd reads the raw device "+in)
			} else {
				w.read(seg, strings.TrimPrefix(a.s, "if="))
			}
		}
	}
	seg.find(Medium, CatWrite, "dd copies raw data")
}

func (w *walker) chmod(seg *Segment, name string, args []arg) {
	fs := parseFlags(args)
	recursive := fs.short['R'] || fs.long["recursive"]
	pos := fs.pos
	mode := ""
	if len(pos) > 0 {
		mode = pos[0].s
		pos = pos[1:]
	}
	wide := name == "chmod" && (strings.Contains(mode, "777") || strings.Contains(mode, "666") || strings.Contains(mode, "o+w") ||
		strings.Contains(mode, "a+w") || strings.Contains(mode, "+rwx") || mode == "a=rwx")
	setuid := name == "chmod" && (strings.Contains(mode, "+s") || len(mode) == 4 && (mode[0] == '4' || mode[0] == '2' || mode[0] == '6'))
	for _, p := range pos {
		if p.dyn {
			continue
		}
		n := w.normPath(p.s)
		if w.criticalTarget(p.s) && (recursive || wide) {
			seg.find(Critical, CatDestructive, fmt.Sprintf("%s on %q changes the whole system or home", name, p.s))
		}
		if under(n, "~/.ssh") || hasComponents(n, ".ssh") {
			seg.find(High, CatPersistence, name+" on ~/.ssh")
		}
		for _, d := range systemDirs {
			if under(n, d) {
				seg.find(Critical, CatPrivilege, name+" on the system path "+n)
			}
		}
	}
	switch {
	case setuid:
		seg.find(High, CatPrivilege, "chmod sets the setuid/setgid bit")
	case recursive && wide:
		seg.find(High, CatPrivilege, "chmod -R makes a tree world-writable")
	case wide:
		seg.find(Medium, CatPrivilege, "chmod makes files world-writable")
	default:
		seg.find(Medium, CatWrite, name+" changes file permissions")
	}
}

func (w *walker) downloader(seg *Segment, name string, args []arg) {
	w.network = true
	w.download = true
	upload := false
	for i, a := range args {
		v := a.s
		next := func() string {
			if i+1 < len(args) {
				return args[i+1].s
			}
			return ""
		}
		switch {
		case a.dyn:
		case v == "-d" || v == "--data" || v == "--data-binary" || v == "--data-raw" || v == "--data-urlencode" || v == "-F" || v == "--form" || v == "--json":
			if d := next(); strings.HasPrefix(d, "@") || strings.Contains(d, "=@") || strings.Contains(d, "=<") {
				upload = true
				f := d[strings.IndexByte(d, '@')+1:]
				w.read(seg, f)
			}
		case v == "-T" || v == "--upload-file" || strings.HasPrefix(v, "--post-file") || strings.HasPrefix(v, "--body-file"):
			upload = true
			f := next()
			if j := strings.IndexByte(v, '='); j >= 0 {
				f = v[j+1:]
			}
			w.read(seg, f)
		case v == "-o" || v == "--output" || v == "-O" && name == "wget" || v == "--output-document":
			if f := next(); f != "-" && f != "" {
				w.write(seg, f)
			}
		}
	}
	if upload {
		seg.find(High, CatExfiltration, name+" uploads a file")
	} else {
		seg.find(Medium, CatNetwork, name+" downloads from the network")
	}
}

func (w *walker) admin(seg *Segment, name string, args []arg) {
	switch name {
	case "crontab":
		if hasShort(args, "l") {
			seg.find(Low, CatReadOnly, "crontab -l only lists")
			return
		}
		seg.find(High, CatPersistence, "crontab changes scheduled jobs")
	case "killall", "pkill":
		seg.find(High, CatDestructive, name+" kills processes by name")
	default:
		seg.find(High, CatPrivilege, name+" changes system configuration")
	}
}

func (w *walker) docker(seg *Segment, args []arg) {
	fs := parseFlags(args)
	if len(fs.pos) == 0 {
		seg.find(Low, CatReadOnly, "docker without a command")
		return
	}
	switch sub := fs.pos[0].s; sub {
	case "ps", "images", "version", "info", "logs", "inspect", "top", "stats", "history", "search":
		seg.find(Low, CatReadOnly, "docker "+sub+" only reads")
	case "build", "pull", "tag", "login", "push":
		seg.find(Medium, CatWrite, "docker "+sub+" changes images")
	case "run", "exec", "create", "start", "compose":
		risk := High
		for _, a := range args {
			if a.s == "--privileged" || strings.HasPrefix(a.s, "/:") || strings.Contains(a.s, "docker.sock") || a.s == "--pid=host" || a.s == "--net=host" {
				risk = Critical
			}
		}
		seg.find(risk, CatPrivilege, "docker "+sub+" runs a container (can reach the host)")
	default:
		seg.find(Medium, CatWrite, "docker "+sub+" changes containers or images")
	}
}

func (w *walker) writer(seg *Segment, name string, args []arg) {
	fs := parseFlags(args)
	switch name {
	case "cp", "mv", "ln", "install":
		if len(fs.pos) > 0 {
			for _, p := range fs.pos[:len(fs.pos)-1] {
				if !p.dyn {
					w.read(seg, p.s)
					if name == "mv" {
						w.write(seg, p.s)
					}
				}
			}
			if t := fs.pos[len(fs.pos)-1]; !t.dyn {
				w.write(seg, t.s)
			} else {
				seg.find(Unknown, CatUnknown, name+" to a path only known at run time")
			}
		}
	case "tee", "touch", "truncate", "mkdir", "rmdir", "unlink":
		for _, p := range fs.pos {
			if !p.dyn && !(name == "truncate" && isDigits(strings.TrimLeft(p.s, "+-<>/%"))) {
				w.write(seg, p.s)
			}
		}
	case "tar":
		for i, a := range args {
			if a.s == "-C" && i+1 < len(args) {
				w.write(seg, args[i+1].s)
			}
			if strings.HasPrefix(a.s, "--to-command") || strings.HasPrefix(a.s, "--checkpoint-action") || strings.HasPrefix(a.s, "--use-compress-program") || a.s == "-I" {
				seg.find(High, CatCodeExecution, "tar "+a.s+" runs a program")
			}
		}
	case "npm", "yarn", "pnpm":
		if len(fs.pos) > 0 {
			switch fs.pos[0].s {
			case "ls", "list", "view", "info", "outdated", "why", "help", "search", "explain", "config", "whoami":
				seg.find(Low, CatReadOnly, name+" "+fs.pos[0].s+" only reads")
				return
			}
		} else if fs.short['v'] || fs.long["version"] {
			seg.find(Low, CatReadOnly, name+" --version")
			return
		}
	case "pip", "pip3":
		if len(fs.pos) > 0 {
			switch fs.pos[0].s {
			case "list", "show", "freeze", "check", "help", "search", "index":
				seg.find(Low, CatReadOnly, name+" "+fs.pos[0].s+" only reads")
				return
			}
		}
	case "make":
		if fs.short['n'] || fs.long["dry-run"] || fs.long["just-print"] {
			seg.find(Low, CatReadOnly, "make -n only prints")
			return
		}
	case "kill":
		for _, p := range fs.pos {
			if p.s == "-1" || p.s == "0" {
				seg.find(Critical, CatDestructive, "kill of every process")
			}
		}
		if strings.Contains(strings.Join(argvStrings(args), " "), "-1") && len(fs.pos) == 0 {
			seg.find(Critical, CatDestructive, "kill of every process")
		}
	case "gofmt", "goimports", "prettier", "black", "ruff", "eslint":
		if !fs.short['w'] && !fs.long["write"] && !fs.long["fix"] && name != "black" && !(name == "ruff" && len(fs.pos) > 0 && fs.pos[0].s == "format") {
			seg.find(Low, CatReadOnly, name+" only checks")
			return
		}
	}
	seg.find(Medium, CatWrite, name+" changes files or runs project code")
}

// credMarkers are substrings every path credentialPath accepts contains.
var credMarkers = []string{"env", "id_", "ssh", "aws", "gnupg", "gh", "kube", "docker", "azure", "gcloud", "netrc",
	"credentials", "npmrc", "pypirc", "pgpass", ".pem", ".key", ".p12", ".pfx", "shadow", "sudoers"}

// mayBeCredential is a cheap filter in front of credentialPath.
func mayBeCredential(p string) bool {
	for _, m := range credMarkers {
		if strings.Contains(p, m) {
			return true
		}
	}
	return false
}
