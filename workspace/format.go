package workspace

import (
	"encoding/json"
	"fmt"
	"time"
)

// The schema names and versions of the files the store writes. A reader
// accepts every version up to its own and refuses a newer one with an error
// that names the file.
const (
	schemaBase      = "paddock.messages.base"
	schemaEvents    = "paddock.messages.events"
	schemaRuntime   = "paddock.runtime-events"
	schemaAudit     = "paddock.audit"
	schemaMetadata  = "paddock.instance"
	schemaExtension = "paddock.extension"
	schemaConfig    = "paddock.config"
	formatVersion   = 1
)

type fileHeader struct {
	Schema  string `json:"schema"`
	Version int    `json:"version"`
}

func (h fileHeader) check(file, schema string) error {
	if h.Schema != schema {
		return fmt.Errorf("workspace: %s: schema %q, want %q", file, h.Schema, schema)
	}
	if h.Version < 1 || h.Version > formatVersion {
		return fmt.Errorf("workspace: %s: format version %d is newer than this paddock reads (%d); upgrade paddock", file, h.Version, formatVersion)
	}
	return nil
}

// baseRecord is one line of base.jsonl: the header, a message, or a commit
// mark that seals the messages before it.
type baseRecord struct {
	Header *fileHeader `json:"header,omitempty"`
	Msg    *Message    `json:"msg,omitempty"`
	Commit *commitMark `json:"commit,omitempty"`
}

// commitMark ends a fold. Messages after the last mark belong to a fold
// that never finished and are cut at open.
type commitMark struct {
	Turn  string    `json:"turn"`
	Seq   uint64    `json:"seq"`   // last event sequence folded
	Count int       `json:"count"` // messages in the base after this fold
	Time  time.Time `json:"time"`
}

// eventRecord is one line of events.jsonl.
type eventRecord struct {
	Header *fileHeader `json:"header,omitempty"`
	Seq    uint64      `json:"seq,omitempty"`
	Turn   string      `json:"turn,omitempty"`
	Event  *Event      `json:"event,omitempty"`
	Ext    *extRecord  `json:"ext,omitempty"`
}

// extRecord stages an extension's new state in the turn's event log, so
// that it commits atomically with the turn's messages.
type extRecord struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
}

// extFile is extensions/<name>.json.
type extFile struct {
	Schema  string          `json:"schema"`
	Version int             `json:"version"`
	Name    string          `json:"name"`
	Seq     uint64          `json:"seq"`
	Value   json.RawMessage `json:"value"`
}

// Status is an instance's run status.
type Status string

// The instance statuses.
const (
	StatusIdle       Status = "idle"
	StatusProcessing Status = "processing"
)

// Metadata is metadata.json: what an instance is and whether a turn is
// running. A "processing" status found at open means the last run ended
// inside a turn.
type Metadata struct {
	Schema      string    `json:"schema"`
	Version     int       `json:"version"`
	Status      Status    `json:"status"`
	AgentName   string    `json:"agentName"`
	InstanceKey string    `json:"instanceKey"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// auditRecord is one line of the workspace's audit.jsonl.
type auditRecord struct {
	Header      *fileHeader `json:"header,omitempty"`
	Time        time.Time   `json:"time,omitzero"`
	Action      string      `json:"action,omitempty"`
	InstanceKey string      `json:"instanceKey,omitempty"`
	Dir         string      `json:"dir,omitempty"`
	Detail      string      `json:"detail,omitempty"`
}

// RuntimeEvent is one observability record of runtime-events.jsonl: a turn,
// step or tool event. Recovery never reads these. Type follows the
// "turn.*", "step.*", "tool.*" families, e.g. "turn.started",
// "step.completed", "tool.called".
type RuntimeEvent struct {
	Type        string         `json:"type"`
	Time        time.Time      `json:"timestamp"`
	AgentName   string         `json:"agentName,omitempty"`
	InstanceKey string         `json:"instanceKey,omitempty"`
	TurnID      string         `json:"turnId,omitempty"`
	StepID      string         `json:"stepId,omitempty"`
	StepIndex   int            `json:"stepIndex,omitempty"`
	ToolCallID  string         `json:"toolCallId,omitempty"`
	ToolName    string         `json:"toolName,omitempty"`
	Data        map[string]any `json:"data,omitempty"`
}

type runtimeRecord struct {
	Header *fileHeader   `json:"header,omitempty"`
	Event  *RuntimeEvent `json:"event,omitempty"`
}
