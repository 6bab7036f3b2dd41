//go:build !linux

package dockersandbox

// nativeSeccomp returns "" where github.com/moby/profiles/seccomp does not
// build (its default profile names Linux constants): a client on another
// system leaves the engine's own default profile in place.
func nativeSeccomp() string { return "" }
