package agent_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paddockdev/paddock/agent"
)

func TestHTTPRequestOffWithoutNetwork(t *testing.T) {
	for _, opts := range []*agent.ToolOptions{nil, {AllowDomains: []string{"example.com"}}, {Network: true}} {
		if _, err := agent.HTTPRequest(opts); !errors.Is(err, agent.ErrNetworkDisabled) {
			t.Errorf("HTTPRequest(%+v) = %v, want ErrNetworkDisabled", opts, err)
		}
	}
}

func TestHTTPRequest(t *testing.T) {
	var got []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, "other "+r.URL.Path)
		fmt.Fprint(w, "should not be reached")
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.Path)
		switch r.URL.Path {
		case "/hello":
			w.Header().Set("X-Test", "yes")
			body, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "hello %s %s", r.Header.Get("X-Who"), body)
		case "/missing":
			http.Error(w, "not here", http.StatusNotFound)
		case "/away":
			// Same server under another name: localhost is not allowed.
			http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/x", http.StatusFound)
		case "/big":
			fmt.Fprint(w, strings.Repeat("b", 100<<10))
		}
	}))
	defer srv.Close()
	tool, err := agent.HTTPRequest(&agent.ToolOptions{Network: true, AllowDomains: []string{"127.0.0.1", "*.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := agent.NewSet(tool)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		input   map[string]any
		isError bool
		want    string
	}{
		{"allowed", map[string]any{"url": srv.URL + "/hello", "method": "POST", "headers": map[string]string{"X-Who": "model"}, "body": "data"}, false, "hello model data"},
		{"headers shown", map[string]any{"url": srv.URL + "/hello"}, false, "X-Test: yes"},
		{"404 is an error result", map[string]any{"url": srv.URL + "/missing"}, true, "404 Not Found"},
		{"domain not allowed", map[string]any{"url": strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/hello"}, true, `host "localhost" is not in the allowed domains (127.0.0.1, *.example.com)`},
		{"suffix is not a subdomain", map[string]any{"url": "http://evilexample.com/"}, true, "is not in the allowed domains"},
		{"redirect out refused", map[string]any{"url": srv.URL + "/away"}, true, "redirect refused"},
		{"scheme", map[string]any{"url": "file:///etc/passwd"}, true, "must be http or https"},
		{"credentials", map[string]any{"url": "http://u:p@127.0.0.1/"}, true, "must not carry credentials"},
		{"method enum", map[string]any{"url": srv.URL, "method": "TRACE"}, true, "method: must be one of"},
		{"body capped", map[string]any{"url": srv.URL + "/big"}, false, "[body truncated after 65536 bytes]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, set, "http_request", tc.input)
			if res.IsError != tc.isError || !strings.Contains(res.Content, tc.want) {
				t.Errorf("= IsError %v %.300q, want IsError %v and %q", res.IsError, res.Content, tc.isError, tc.want)
			}
		})
	}
	for _, g := range got {
		if strings.HasPrefix(g, "other") {
			t.Errorf("a refused host was reached: %v", got)
		}
	}
}

func TestWebSearch(t *testing.T) {
	set, err := agent.NewSet(agent.WebSearch(fakeSearcher{}))
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, set, "web_search", map[string]any{"query": "go generics", "max_results": 2})
	if res.IsError || !strings.Contains(res.Content, "1. go generics 1\n   https://example.com/1") || strings.Contains(res.Content, "3.") {
		t.Errorf("search = %+v", res)
	}
	failing, _ := agent.NewSet(agent.WebSearch(fakeSearcher{err: errors.New("quota exceeded")}))
	if res := call(t, failing, "web_search", map[string]any{"query": "x"}); !res.IsError || !strings.Contains(res.Content, "search failed: quota exceeded") {
		t.Errorf("failing search = %+v", res)
	}
	none, _ := agent.NewSet(agent.WebSearch(nil))
	res = call(t, none, "web_search", map[string]any{"query": "x"})
	if !res.IsError || !strings.Contains(res.Content, "web search is not configured on this host") {
		t.Errorf("unconfigured search = %+v", res)
	}
	if tool, _ := none.Tool("web_search"); !strings.Contains(tool.Description(), "Not configured") {
		t.Errorf("description %q does not say it is not configured", tool.Description())
	}
}
