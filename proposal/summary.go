package proposal

import (
	"fmt"
	"strings"
)

// Summary returns the summary.md of p: a short Markdown report for a human
// reviewer, listing every changed and excluded file.
func Summary(p *Proposal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Proposal %s\n\n", shortID(p.ID))
	fmt.Fprintf(&b, "- Run: `%s`, agent: `%s`\n", p.RunID, p.AgentID)
	if p.Base.GitHead != "" {
		fmt.Fprintf(&b, "- Base commit: `%s`\n", p.Base.GitHead)
	}
	add, del := 0, 0
	for _, c := range p.ChangedFiles {
		add += c.LinesAdded
		del += c.LinesDeleted
	}
	fmt.Fprintf(&b, "- %d file(s) changed, %d insertion(s)(+), %d deletion(s)(-)\n\n", len(p.ChangedFiles), add, del)
	if len(p.ChangedFiles) > 0 {
		b.WriteString("| status | file | + | - |\n|---|---|---|---|\n")
		for _, c := range p.ChangedFiles {
			name := mdCode(c.Path)
			if c.Status == Renamed {
				name = fmt.Sprintf("%s → %s (%d%%)", mdCode(c.OldPath), mdCode(c.Path), c.Similarity)
			}
			st := string(c.Status)
			if c.OldMode != "" && c.NewMode != "" && c.OldMode != c.NewMode {
				st += fmt.Sprintf(", mode %s → %s", c.OldMode, c.NewMode)
			}
			plus, minus := fmt.Sprint(c.LinesAdded), fmt.Sprint(c.LinesDeleted)
			if c.Binary {
				plus, minus = "bin", "bin"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", st, name, plus, minus)
		}
		b.WriteString("\n")
	}
	if len(p.Excluded) > 0 {
		b.WriteString("## Not included\n\n")
		for _, e := range p.Excluded {
			fmt.Fprintf(&b, "- %s: %s\n", mdCode(e.Path), e.Reason)
		}
		b.WriteString("\n")
	}
	if p.Notes != "" {
		fmt.Fprintf(&b, "## Notes\n\n%s\n\n", strings.TrimSpace(p.Notes))
	}
	if p.Paths.TestLog != "" {
		fmt.Fprintf(&b, "Test output: `%s`\n", p.Paths.TestLog)
	}
	return b.String()
}

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		id = id[:12]
	}
	return id
}

// mdCode formats s as inline code, quoting it the way git does when it
// holds control characters.
func mdCode(s string) string {
	s = string(quoteName(nil, s))
	s = strings.ReplaceAll(s, "`", "'")
	s = strings.ReplaceAll(s, "|", `\|`)
	return "`" + s + "`"
}
