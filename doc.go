// Package paddock is an embeddable SDK for hosts that run AI coding agents.
// The module is a set of small packages that a host imports and composes:
//
//   - [github.com/paddockdev/paddock/workspace]: where state lives. A 2-root
//     layout (the user's project, untouched by the runtime, and a state root)
//     and per-instance message logs that survive a crash at any byte:
//     events are appended during a turn and folded into the base log at its
//     end.
//   - [github.com/paddockdev/paddock/sandbox] (in progress): where a worker
//     agent runs. A snapshot of chosen files (input/ baseline and work/ copy)
//     and isolation backends (a plain directory and bubblewrap today, Docker
//     next) behind one contract, with traversal-proof file tools.
//   - proposal (planned): how a worker's change comes back: a git-compatible
//     patch of input/ against work/, reviewed and applied to the project
//     atomically.
//   - approval (planned): a post-model hook that stops risky tool calls for a
//     decision bound to the exact call.
//   - safety (planned): analyzers that classify shell commands and tool calls.
//   - agent (planned): profiles, the standard tools and a reference loop that
//     composes the rest.
//
// # Data flow
//
// A host resolves [github.com/paddockdev/paddock/workspace.Paths] and opens an instance of its
// [github.com/paddockdev/paddock/workspace.Store], which recovers whatever a crash left. The orchestrator
// picks files, and a sandbox copies them under the state root; a worker runs
// its tools there. Every model response passes the approval hook, and the
// turn's messages are appended as events and folded into the base log when
// the turn ends. The worker's change comes back as a proposal, which the
// orchestrator reviews and applies to the project atomically.
package paddock
