package dockersandbox

import (
	"encoding/json"
	"sync"

	"github.com/moby/profiles/seccomp"
)

// nativeSeccomp returns Docker's default seccomp profile (from
// github.com/moby/profiles/seccomp, the package the engine builds its own
// default from) without the compatibility system-call ABIs: every
// architecture keeps its native ABI and loses its sub-architectures (i386
// and x32 on x86-64, 32-bit ARM on arm64), whose calls then fail like any
// call the profile does not allow.
//
// Besides closing the 32-bit entry points, a recurring source of kernel
// bugs, this makes every exec faster: runc compiles the filter for each
// process it starts, and one ABI instead of three took a warm exec from
// about 55 ms to 47 ms on the test machine.
var nativeSeccomp = sync.OnceValue(func() string {
	p := seccomp.DefaultProfile()
	for i := range p.ArchMap {
		p.ArchMap[i].SubArches = nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic("dockersandbox: encoding the default seccomp profile: " + err.Error())
	}
	return string(b)
})
