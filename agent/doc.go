// Package agent holds what an agent host needs around the model: profiles
// that decide where an agent runs, the tools it may call (built on a
// *sandbox.Sandbox, so a worker's tools act only in its sandbox), its system
// prompt, and the small Model interface a loop drives.
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
// safety analysis plugs in), read_file, write_file, edit_file and list_files;
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
// tests and offline demos.
//
// # Errors
//
// Profiles: [ErrInvalidProfile], [ErrNoHome], [ErrOutsideSandbox]. Tools
// return a *[ToolError] for a failure the model can act on (its Message is
// what the model sees, its Err the internal cause); [Set.Call] turns those,
// input that fails validation (*[ValidationError], wrapping
// [ErrInvalidInput]) and unknown tools into error results. Other errors
// (context done, a broken sandbox) are the host's. [ErrNetworkDisabled],
// [ErrScriptExhausted] and [ErrUnexpectedRequest] are the rest.
//
// # Concurrency
//
// Profiles are values. Tools, sets and ScriptedModel are safe for concurrent
// use. Cancelling a tool's ctx kills the command it runs (the sandbox kills
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
