// Package agent holds what an agent host needs around the model: profiles
// that decide where an agent runs, the tools it may call (built on a
// *sandbox.Sandbox, so a worker's tools act only in its sandbox), its system
// prompt, the small Model interface, the reference [Loop] that composes them
// with the approval hook and the workspace's message log, and [Orchestrate],
// the orchestrator flow from a task to an applied, tested proposal.
//
// # Profiles and cwd
//
// A [Profile] says who an agent is (its id and [Role], orchestrator or
// worker), where it lives (HomeDir, and for a worker the SandboxDir it is
// confined to), how it runs ([Runtime], with a [CwdMode]) and which tools it
// may use. [NewProfile] defaults workers to [AgentHomeCwd] and orchestrators
// to [WorkspaceCwd]. [ResolveCwd] is the one place that decides an agent's
// working directory: a worker whose home is unset, or outside its sandbox, is
// an error, never a silent fallback to the workspace root. [CodeReviewer] and
// [TestGenerator] are subagent profiles with restricted tool sets.
//
// # Tools
//
// A [Tool] has a name, a description, the JSON [Schema] of its input, and
// Run. A [Set] holds tools with distinct names; [Set.Call] validates the input
// against the schema (a subset of JSON Schema, with errors that name the
// field) and turns problems the model can fix into error results.
//
// [StandardTools] are execute_bash (through a [CommandGuard], where shell
// safety analysis plugs in: [AnalyzerGuard] runs a safety.Analyzer and fails
// closed), read_file, write_file, edit_file and list_files;
// http_request only when the sandbox's spec allows network, limited to a
// domain allow-list; web_search over a host's [Searcher].
//
// [SupervisorTools] are the supervisor actions of seed 004 — clone_repo,
// list_files, create_venv, edit, run_in_venv — whose results are an
// [Envelope]: {command, result, metadata{stdout, stderr, action, dir_path}}.
//
// # Instructions
//
// [Instructions] builds the system prompt from the profile, the tools the
// agent actually has, its sandbox kind, cwd and approval policy; it never
// describes a tool the agent lacks.
//
// # Models
//
// [Model] answers a [Request] (system prompt, [Message]s of text, tool_use
// and tool_result [Block]s, [ToolDef]s) with a [Response] (content, stop
// reason, usage). The types map 1:1 onto the Anthropic Messages API.
// [ScriptedModel] replays a list of responses, checking each request, for
// tests and offline demos. [AnthropicModel] asks the Anthropic Messages API
// (ANTHROPIC_API_KEY), with tool use.
//
// # The loop
//
// [Loop] runs one agent turn by turn: model → the approval hook (every call
// decided by its id: run, answered in place of running, waiting for a human,
// or the turn aborted) → the tools, in the sandbox → every result back to
// the model, rejections and replies included, so it learns what happened.
// Each message is appended to the workspace instance as it comes, with a
// durable step after each answer and each round of results; the turn is
// committed when the model ends it.
//
//	loop := &agent.Loop{Model: model, Tools: tools, Instance: inst, Hook: hook, Cwd: cwd, System: prompt}
//	res, err := loop.Run(ctx, "Make the tests pass.")
//	if res.Status == agent.StatusPaused { // calls wait for a human: res.Pending
//		res, err = loop.Resume(ctx, map[string]approval.Response{res.Pending[0].ID: {Kind: approval.Approve}})
//	}
//
// A paused turn survives the process: its state is in the instance (the
// [LoopExtension] extension, logged at each step), so after a restart a new
// Loop over the reopened instance lists [Loop.Paused] and resumes the same
// turn. The hook checks each decision against the call's digest, so a call
// changed since it was put up for approval does not run.
//
// # Orchestration
//
// [Orchestrate] is seed 000's orchestrator flow as one call: prepare the
// worker's sandbox from the chosen files, run the worker (its own instance,
// profile, cwd, tools and prompt) until it ends its turn, receive its
// HANDOFF, create and review the proposal, apply it (or reject it), run the
// project's tests in a sandbox over the project, and log each stage to the
// orchestrator's runtime events. examples/quickstart is this flow.
//
// # Errors
//
// Profiles: [ErrInvalidProfile], [ErrNoHome], [ErrOutsideSandbox]. Tools
// return a *[ToolError] for a failure the model can act on (its Message is
// what the model sees, its Err the internal cause); [Set.Call] turns those,
// input that fails validation (*[ValidationError], wrapping
// [ErrInvalidInput]) and unknown tools into error results. Other errors
// (context done, a broken sandbox) are the host's. [ErrNetworkDisabled],
// [ErrScriptExhausted] and [ErrUnexpectedRequest] are the rest. The loop
// returns [ErrTurnPaused], [ErrNoPendingTurn] and [ErrMissingDecision], and
// passes the model's, the store's and the hook's errors through, wrapped.
//
// # Concurrency
//
// Profiles are values. Tools, sets, ScriptedModel and AnthropicModel are
// safe for concurrent use; a Loop drives one conversation and is not. Cancelling a tool's ctx kills the command it runs (the sandbox kills
// the whole process tree) and the tool returns ctx's error.
//
// # Security
//
// Tools act through the sandbox: file tools go through os.Root (no "..",
// absolute path or symbolic link leaves the work directory) and commands run
// in the sandbox's backend. What contains a command is the backend: with the
// plain directory backend nothing does. ResolveCwd checks paths, not
// processes. http_request runs in the host process: its allow-list is on
// host names and does not stop an allowed name resolving to a private
// address. clone_repo refuses git transport helpers ("ext::") and options
// passed as URLs, but a cloned repository is untrusted content.
package agent
