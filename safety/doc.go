// Package safety judges tool calls, above all shell commands, before an
// agent runs them.
//
// An [Analyzer] takes a [Call] (tool name, JSON arguments, working
// directory) and returns a [Verdict]: a [Risk] (low, medium, high, critical
// or unknown), a [Category], the reasons, and for shell commands the
// per-segment findings.
//
// [ShellAnalyzer] applies rules over a real parse (mvdan.cc/sh/v3/syntax).
// It splits compound commands (&&, ||, ;, |, |&, &, newlines, subshells,
// { }, $(…), backticks, process substitution) and judges every segment; it
// recurses into bash -c strings and eval, looks through wrappers (env, sudo,
// timeout, nice, nohup, stdbuf, time, command, exec, xargs, find -exec),
// treats redirection targets as writes, knows read-only commands with
// argument checks (find without -exec/-delete, sed without e/w commands),
// and flags destructive forms: rm with recursive+force in any spelling,
// dd to devices, mkfs, chmod -R 777 /, fork bombs, curl | sh,
// base64 -d | sh, writes to shell startup files, .git/hooks and ~/.ssh,
// and credential reads (.env, ~/.aws, id_rsa). A second, independent
// tokenizer cross-checks the segmentation.
//
// [LLMClassifier] asks a [Model] (for example [NewAnthropicModel]) for the
// schema {is_safe, threat_type, reasoning, detected_patterns, risk_level}.
// The call is passed as JSON data between delimiters, never spliced into
// the instructions.
//
// [Ensemble] combines analyzers: the most severe verdict wins, a failing
// analyzer counts as Unknown, and the rules are a floor the classifier
// cannot lower.
//
// # Fail closed
//
// A command that does not parse, a command name only known at run time
// ($CMD args), an unknown command, a form the analyzer does not know, and
// a disagreement between the parser and the second tokenizer are all at
// least Unknown: "ask", never "safe". So is any failure of the classifier:
// a missing API key, a network error, a timeout, an answer that does not fit
// the schema.
//
// # Concurrency
//
// ShellAnalyzer, LLMClassifier and Ensemble are safe for concurrent use.
//
// # Security
//
// The analyzers reduce risk; they are not a sandbox. They do not protect
// against:
//
//   - programs whose behaviour depends on files the analyzer cannot see:
//     a Makefile, a package.json script, a project test, a script file run
//     by bash script.sh (these are Medium or Unknown, never Low, but what
//     they do is not analyzed);
//   - inline code of other languages (python -c, node -e, awk programs with
//     system()), which is Unknown rather than analyzed;
//   - commands that behave differently because of aliases, functions or
//     PATH entries set up outside the analyzed command;
//   - a model that a prompt injection convinces: the LLM classifier can
//     only raise a verdict in an Ensemble, never lower the rules' verdict.
//
// Run agents' commands in a sandbox (package sandbox) as well.
package safety
