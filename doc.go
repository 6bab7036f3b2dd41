// Package paddock is an embeddable SDK for hosts that run AI coding agents.
// The module is a set of small packages that a host imports and composes:
//
//   - [github.com/paddockdev/paddock/workspace]: where state lives. A 2-root
//     layout (the user's project, untouched by the runtime, and a state root)
//     and per-instance message logs that survive a crash at any byte:
//     events are appended during a turn and folded into the base log at its
//     end.
//   - [github.com/paddockdev/paddock/sandbox]: where a worker agent runs. A
//     snapshot of chosen files (input/ baseline and work/ copy) and isolation
//     backends behind one contract ([github.com/paddockdev/paddock/sandbox/dirsandbox],
//     [github.com/paddockdev/paddock/sandbox/bwrapsandbox],
//     [github.com/paddockdev/paddock/sandbox/dockersandbox]), with
//     tree-killing timeouts and traversal-proof file tools.
//   - [github.com/paddockdev/paddock/proposal]: how a worker's change comes
//     back: a git-compatible patch of input/ against work/, made in Go,
//     reviewed, and applied to the project atomically under a journal.
//   - [github.com/paddockdev/paddock/approval]: a post-model hook that stops
//     risky tool calls for a decision bound to the exact call, with pending
//     approvals that survive a restart and a hash-chained audit.
//   - [github.com/paddockdev/paddock/safety]: analyzers that judge shell
//     commands and tool calls, failing closed.
//   - [github.com/paddockdev/paddock/agent]: profiles, the standard tools, the
//     Model interface, a reference loop that composes the rest, and the
//     orchestrator flow.
//
// # Data flow
//
// A host resolves [github.com/paddockdev/paddock/workspace.Paths] and opens an
// instance of its [github.com/paddockdev/paddock/workspace.Store], which
// recovers whatever a crash left. The orchestrator picks files, and
// [github.com/paddockdev/paddock/sandbox.Prepare] copies them under the state
// root; a worker runs its tools there, through a backend. Every model
// response passes the approval hook, and the turn's messages are appended as
// events and folded into the base log when the turn ends. The worker's change
// comes back as a proposal, which the orchestrator reviews and applies to the
// project atomically. [github.com/paddockdev/paddock/agent.Orchestrate] is
// that flow as one call; examples/quickstart runs it.
package paddock
