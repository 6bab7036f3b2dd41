package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Message is one entry of an instance's conversation. Data is the message as
// the host's model API shapes it (role, content, tool calls, …); the store
// keeps it as opaque JSON. The store shares Data and Metadata with its
// callers rather than copying them: do not modify a message after passing
// it to the store or getting it from it.
type Message struct {
	ID        string          `json:"id"`
	Data      json.RawMessage `json:"data"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
	CreatedAt time.Time       `json:"createdAt"`
	Source    Source          `json:"source"`
}

// Source says who produced a message.
type Source struct {
	// Type is "user", "assistant", "tool", "system" or "extension".
	Type          string `json:"type"`
	StepID        string `json:"stepId,omitempty"`
	ToolCallID    string `json:"toolCallId,omitempty"`
	ToolName      string `json:"toolName,omitempty"`
	ExtensionName string `json:"extensionName,omitempty"`
}

// EventType names a change to the message list.
type EventType string

// The message events.
const (
	// EventAppend adds Message at the end.
	EventAppend EventType = "append"
	// EventReplace puts Message in the place of the message TargetID.
	EventReplace EventType = "replace"
	// EventRemove removes the message TargetID.
	EventRemove EventType = "remove"
	// EventTruncate removes every message.
	EventTruncate EventType = "truncate"
)

// Event is one change to the message list during a turn. The list at any
// time is the committed base with the turn's events applied in order.
type Event struct {
	Type     EventType `json:"type"`
	TargetID string    `json:"targetId,omitempty"`
	Message  *Message  `json:"message,omitempty"`
}

// Append returns an event that appends m.
func Append(m Message) Event { return Event{Type: EventAppend, Message: &m} }

// Replace returns an event that replaces the message targetID with m.
func Replace(targetID string, m Message) Event {
	return Event{Type: EventReplace, TargetID: targetID, Message: &m}
}

// Remove returns an event that removes the message targetID.
func Remove(targetID string) Event { return Event{Type: EventRemove, TargetID: targetID} }

// Truncate returns an event that removes every message.
func Truncate() Event { return Event{Type: EventTruncate} }

// ErrInvalidEvent is returned when an event is malformed or does not fit
// the message list (a replace of a missing message, a duplicate id, …).
var ErrInvalidEvent = errors.New("workspace: invalid message event")

// validateShape checks what can be checked without the message list,
// including that message data is valid JSON.
func (e Event) validateShape() error {
	if err := e.validateFields(); err != nil {
		return err
	}
	if m := e.Message; m != nil && len(m.Data) > 0 && !json.Valid(m.Data) {
		return e.invalidData()
	}
	return nil
}

func (e Event) invalidData() error {
	return fmt.Errorf("%w: %s: message %q: data is not valid JSON", ErrInvalidEvent, e.Type, e.Message.ID)
}

// validateFields is validateShape without the check of message data, for
// callers that validate the data as they encode it.
func (e Event) validateFields() error {
	switch e.Type {
	case EventAppend, EventReplace:
		if e.Message == nil {
			return fmt.Errorf("%w: %s needs a message", ErrInvalidEvent, e.Type)
		}
		if e.Message.ID == "" {
			return fmt.Errorf("%w: %s: message has an empty id", ErrInvalidEvent, e.Type)
		}
		if e.Type == EventReplace && e.TargetID == "" {
			return fmt.Errorf("%w: replace needs a target id", ErrInvalidEvent)
		}
	case EventRemove:
		if e.TargetID == "" {
			return fmt.Errorf("%w: remove needs a target id", ErrInvalidEvent)
		}
	case EventTruncate:
	default:
		return fmt.Errorf("%w: unknown type %q (want append, replace, remove or truncate)", ErrInvalidEvent, e.Type)
	}
	return nil
}

// msgList is a message list with an index by id.
type msgList struct {
	msgs  []Message
	index map[string]int
}

func (l *msgList) reset(msgs []Message) {
	l.msgs = msgs
	l.index = make(map[string]int, len(msgs))
	for i, m := range msgs {
		l.index[m.ID] = i
	}
}

func (l *msgList) clone() *msgList {
	c := &msgList{}
	c.reset(append([]Message(nil), l.msgs...))
	return c
}

// apply applies e, which must have a valid shape.
func (l *msgList) apply(e Event) error {
	switch e.Type {
	case EventAppend:
		if _, dup := l.index[e.Message.ID]; dup {
			return fmt.Errorf("%w: append: message id %q already exists", ErrInvalidEvent, e.Message.ID)
		}
		l.index[e.Message.ID] = len(l.msgs)
		l.msgs = append(l.msgs, *e.Message)
	case EventReplace:
		i, ok := l.index[e.TargetID]
		if !ok {
			return fmt.Errorf("%w: replace: no message %q", ErrInvalidEvent, e.TargetID)
		}
		if j, dup := l.index[e.Message.ID]; dup && j != i {
			return fmt.Errorf("%w: replace: message id %q already exists", ErrInvalidEvent, e.Message.ID)
		}
		delete(l.index, e.TargetID)
		l.index[e.Message.ID] = i
		l.msgs[i] = *e.Message
	case EventRemove:
		i, ok := l.index[e.TargetID]
		if !ok {
			return fmt.Errorf("%w: remove: no message %q", ErrInvalidEvent, e.TargetID)
		}
		l.msgs = append(l.msgs[:i:i], l.msgs[i+1:]...)
		delete(l.index, e.TargetID)
		for j := i; j < len(l.msgs); j++ {
			l.index[l.msgs[j].ID] = j
		}
	case EventTruncate:
		l.msgs = nil
		clear(l.index)
	}
	return nil
}
