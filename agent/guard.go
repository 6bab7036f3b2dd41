package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/paddockdev/paddock/safety"
)

// AnalyzerGuard is a CommandGuard that judges every execute_bash command
// with a safety analyzer (a safety.ShellAnalyzer, an Ensemble with an LLM
// classifier, …) and refuses those judged at or above Refuse. It is for
// hosts that run tools without an approval hook, or as a second line behind
// one; with a hook, calls that need a human are asked there first.
//
// It fails closed: a command the analyzer cannot judge (safety.Unknown) is
// refused unless Refuse is raised above it, and an analyzer's error always
// refuses.
type AnalyzerGuard struct {
	Analyzer safety.Analyzer
	// Refuse is the lowest risk refused; empty means safety.Unknown.
	Refuse safety.Risk
}

// CheckCommand implements CommandGuard.
func (g AnalyzerGuard) CheckCommand(ctx context.Context, command, dir string) error {
	if g.Analyzer == nil {
		return fmt.Errorf("no safety analyzer is configured, so no command may run")
	}
	refuse := g.Refuse
	if refuse == "" {
		refuse = safety.Unknown
	}
	args, err := json.Marshal(map[string]string{"command": command})
	if err != nil {
		return err
	}
	v, err := g.Analyzer.Analyze(ctx, safety.Call{Tool: ExecuteBashName, Args: args, Cwd: dir})
	if err != nil {
		return fmt.Errorf("the safety analysis failed (%v), so the command was not run", err)
	}
	risk := safety.Low.Max(v.Risk) // a missing or invalid risk counts as unknown
	if risk.Severity() >= refuse.Severity() {
		reason := strings.Join(v.Reasons, "; ")
		if reason == "" {
			reason = string(v.Category)
		}
		return fmt.Errorf("judged %s risk (%s); run something safer or ask the user", risk, reason)
	}
	return nil
}
