package anthropic_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/paddockdev/paddock/internal/anthropic"
)

func ExampleClient_Messages() {
	// A stand-in for the API that answers with a tool call.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[`+
			`{"type":"tool_use","id":"toolu_1","name":"bash","input":{"command":"go test ./..."}}],`+
			`"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}`)
	}))
	defer srv.Close()

	c := anthropic.New(&anthropic.Options{APIKey: "sk-example", BaseURL: srv.URL})
	resp, err := c.Messages(context.Background(), &anthropic.Request{
		Model:     "claude-haiku-4-5",
		MaxTokens: 256,
		Messages:  []anthropic.Message{{Role: "user", Content: []anthropic.Block{anthropic.TextBlock("run the tests")}}},
		Tools:     []anthropic.Tool{{Name: "bash", InputSchema: []byte(`{"type":"object","properties":{"command":{"type":"string"}}}`)}},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, u := range resp.ToolUses() {
		fmt.Println(resp.StopReason, u.ID, u.Name, string(u.Input))
	}
	// Output:
	// tool_use toolu_1 bash {"command":"go test ./..."}
}
