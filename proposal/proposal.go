package proposal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The proposal.json format.
const (
	// Schema identifies proposal.json.
	Schema = "paddock.proposal"
	// Version is the proposal.json version this package writes and reads.
	Version = "1"
)

// Names of the files of a proposal directory.
const (
	JSONFile     = "proposal.json"
	PatchFile    = "changes.patch"
	SummaryFile  = "summary.md"
	TestLogFile  = "test.log"
	EventsFile   = "events.jsonl"
	RejectedFile = "rejection.json"
)

// Status is how a file changed.
type Status string

// The statuses of a changed file.
const (
	Added    Status = "added"
	Modified Status = "modified"
	Deleted  Status = "deleted"
	Renamed  Status = "renamed"
)

// Git file modes as they appear in proposal.json and patches.
const (
	ModeFile       = "100644"
	ModeExecutable = "100755"
	ModeSymlink    = "120000"
)

// A FileChange is one changed file of a proposal.
type FileChange struct {
	// Path is the file's path after the change (before it, for a
	// deletion), relative to the project, '/'-separated.
	Path string `json:"path"`
	// OldPath is the path before a rename.
	OldPath string `json:"oldPath,omitempty"`
	Status  Status `json:"status"`
	// OldMode and NewMode are git modes ("100644", "100755", "120000"),
	// empty for the side that does not exist.
	OldMode string `json:"oldMode,omitempty"`
	NewMode string `json:"newMode,omitempty"`
	// Before and After are the hex SHA-256 of the content before and
	// after (a symbolic link's content is its target), empty for the side
	// that does not exist.
	Before string `json:"beforeSha256,omitempty"`
	After  string `json:"afterSha256,omitempty"`
	// LinesAdded and LinesDeleted count changed lines of a text file.
	LinesAdded   int  `json:"linesAdded"`
	LinesDeleted int  `json:"linesDeleted"`
	Binary       bool `json:"binary,omitempty"`
	// Similarity is a rename's similarity index, 0–100.
	Similarity int `json:"similarity,omitempty"`
}

// OldName returns the file's path before the change.
func (c FileChange) OldName() string {
	if c.OldPath != "" {
		return c.OldPath
	}
	return c.Path
}

// An Excluded file is one the worker changed that the proposal does not
// carry, with the reason.
type Excluded struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Base is the project state the sandbox was prepared from.
type Base struct {
	// GitHead is the commit HEAD pointed to, or empty.
	GitHead string `json:"gitHead,omitempty"`
}

// Paths locates the parts of a proposal, relative to the sandbox
// directory.
type Paths struct {
	InputDir    string `json:"inputDir"`
	WorkDir     string `json:"workDir"`
	PatchFile   string `json:"patchFile"`
	SummaryFile string `json:"summaryFile"`
	TestLog     string `json:"testLog,omitempty"`
}

// A Proposal is the content of proposal.json: what a worker changed,
// against which base, with content hashes that make it verifiable.
type Proposal struct {
	Schema  string `json:"schema"`
	Version string `json:"version"`
	// ID is content-addressed: "sha256:" and the hex SHA-256 of this JSON
	// document with ID empty. It covers the patch through PatchSHA256.
	ID        string    `json:"id"`
	RunID     string    `json:"runId"`
	AgentID   string    `json:"agentId"`
	CreatedAt time.Time `json:"createdAt"`
	Base      Base      `json:"base"`
	Paths     Paths     `json:"paths"`
	// ChangedFiles are sorted by Path.
	ChangedFiles []FileChange `json:"changedFiles"`
	// Excluded lists changes the proposal does not carry, and why.
	Excluded []Excluded `json:"excluded,omitempty"`
	// PatchSHA256 is the hex SHA-256 of changes.patch.
	PatchSHA256 string `json:"patchSha256"`
	// TestLogSHA256 is the hex SHA-256 of test.log, when there is one.
	TestLogSHA256 string `json:"testLogSha256,omitempty"`
	Notes         string `json:"notes,omitempty"`
}

// computeID returns the content-addressed id of p.
func (p *Proposal) computeID() (string, error) {
	q := *p
	q.ID = ""
	b, err := json.Marshal(&q)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Marshal returns p as proposal.json, indented.
func (p *Proposal) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ErrInvalid is wrapped by the errors of Load and Review for a proposal that
// is malformed or whose hashes do not match its files.
var ErrInvalid = errors.New("proposal: invalid proposal")

// Load reads dir/proposal.json and checks its schema, version and id.
// It does not read the patch; Review does.
func Load(dir string) (*Proposal, error) {
	name := filepath.Join(dir, JSONFile)
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("proposal: %w", err)
	}
	return parseProposal(name, b)
}

func parseProposal(name string, b []byte) (*Proposal, error) {
	var p Proposal
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("proposal: %s: %w: %w", name, ErrInvalid, err)
	}
	if p.Schema != Schema || p.Version != Version {
		return nil, fmt.Errorf("proposal: %s: %w: schema %q version %q, want %q version %q", name, ErrInvalid, p.Schema, p.Version, Schema, Version)
	}
	id, err := p.computeID()
	if err != nil {
		return nil, err
	}
	if id != p.ID {
		return nil, fmt.Errorf("proposal: %s: %w: id %s does not match its content (%s); the file was edited after Create", name, ErrInvalid, p.ID, id)
	}
	return &p, nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
