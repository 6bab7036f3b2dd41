package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// ErrNetworkDisabled is returned by [HTTPRequest] when the sandbox's spec
// does not allow network, or no domain is allowed.
var ErrNetworkDisabled = errors.New("agent: http_request needs a sandbox spec that allows network and a domain allow-list")

// maxHTTPBody caps the response body http_request returns.
const maxHTTPBody = 64 << 10

// domainAllowed reports whether host (no port) matches the allow-list:
// "example.com" matches exactly, "*.example.com" matches its subdomains.
func domainAllowed(host string, allow []string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, a := range allow {
		a = strings.ToLower(strings.TrimSuffix(a, "."))
		if rest, ok := strings.CutPrefix(a, "*."); ok {
			if strings.HasSuffix(host, "."+rest) {
				return true
			}
		} else if host == a {
			return true
		}
	}
	return false
}

func checkHTTPURL(raw string, allow []string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("url %q does not parse: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("url %q must be http or https", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("url %q must not carry credentials", raw)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("url %q has no host", raw)
	}
	if !domainAllowed(host, allow) {
		return nil, fmt.Errorf("host %q is not in the allowed domains (%s)", host, strings.Join(allow, ", "))
	}
	return u, nil
}

// HTTPRequest returns the http_request tool: an HTTP request from the host
// to a URL whose host is in opts.AllowDomains (redirects included), with the
// response status, headers and the first 64 KiB of the body. It refuses to
// exist, with ErrNetworkDisabled, unless opts.Network is true and
// opts.AllowDomains is not empty.
//
// The request is made by the host process, not inside the sandbox, which is
// why it needs the spec's permission. The allow-list is checked on host
// names; it does not stop an allowed name that resolves to a private address.
func HTTPRequest(opts *ToolOptions) (Tool, error) {
	o := opts.orDefault()
	if !o.Network || len(o.AllowDomains) == 0 {
		return nil, ErrNetworkDisabled
	}
	allow := append([]string(nil), o.AllowDomains...)
	client := &http.Client{Timeout: 30 * time.Second}
	if o.HTTPClient != nil {
		c := *o.HTTPClient
		client = &c
	}
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("stopped after 5 redirects")
		}
		if _, err := checkHTTPURL(req.URL.String(), allow); err != nil {
			return fmt.Errorf("redirect refused: %v", err)
		}
		return nil
	}
	schema := Object(map[string]*Schema{
		"url":     String("The http or https URL; its host must be one of: "+strings.Join(allow, ", ")+".", true),
		"method":  {Type: "string", Description: "HTTP method; default GET.", Enum: []any{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}},
		"headers": {Type: "object", Description: "Request headers, name to value."},
		"body":    String("Request body.", false),
	}, "url")
	return NewTool(HTTPRequestName,
		"Make an HTTP request to an allowed domain ("+strings.Join(allow, ", ")+") and return the status, headers and body.",
		schema, func(ctx context.Context, input json.RawMessage) (Result, error) {
			var in struct {
				URL     string            `json:"url"`
				Method  string            `json:"method"`
				Headers map[string]string `json:"headers"`
				Body    string            `json:"body"`
			}
			if err := decodeInput(HTTPRequestName, input, &in); err != nil {
				return Result{}, err
			}
			u, err := checkHTTPURL(in.URL, allow)
			if err != nil {
				return Result{}, toolErr(HTTPRequestName, nil, "%v", err)
			}
			var body io.Reader
			if in.Body != "" {
				body = strings.NewReader(in.Body)
			}
			req, err := http.NewRequestWithContext(ctx, cmpOr(in.Method, "GET"), u.String(), body)
			if err != nil {
				return Result{}, toolErr(HTTPRequestName, err, "cannot make the request: %v", err)
			}
			for k, v := range in.Headers {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				if ctx.Err() != nil {
					return Result{}, ctx.Err()
				}
				var ue *url.Error
				msg := err.Error()
				if errors.As(err, &ue) {
					msg = ue.Err.Error()
				}
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					msg = "timed out"
				}
				return Result{}, toolErr(HTTPRequestName, err, "request to %s failed: %s", u.Redacted(), msg)
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBody+1))
			if err != nil {
				return Result{}, toolErr(HTTPRequestName, err, "reading the response from %s failed: %v", u.Redacted(), err)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%s %s\n", resp.Proto, resp.Status)
			keys := make([]string, 0, len(resp.Header))
			for k := range resp.Header {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(resp.Header[k], ", "))
			}
			b.WriteString("\n")
			if len(data) > maxHTTPBody {
				b.Write(data[:maxHTTPBody])
				fmt.Fprintf(&b, "\n[body truncated after %d bytes]", maxHTTPBody)
			} else {
				b.Write(data)
			}
			return Result{Content: b.String(), IsError: resp.StatusCode >= 400}, nil
		}), nil
}

// Searcher is the web search a host supplies to web_search.
// Implementations must be safe for concurrent use.
type Searcher interface {
	// Search returns at most max results for query.
	Search(ctx context.Context, query string, max int) ([]SearchResult, error)
}

// SearchResult is one web search hit.
type SearchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
}

// WebSearch returns the web_search tool over s. With a nil s the tool still
// exists, and every call tells the model that web search is not configured
// on this host.
func WebSearch(s Searcher) Tool {
	desc := "Search the web and return titles, URLs and snippets."
	if s == nil {
		desc = "Search the web. Not configured on this host: every call fails."
	}
	schema := Object(map[string]*Schema{
		"query":       String("What to search for.", true),
		"max_results": Integer("Most results to return; default 5.", 1, 20),
	}, "query")
	return NewTool(WebSearchName, desc, schema, func(ctx context.Context, input json.RawMessage) (Result, error) {
		var in struct {
			Query      string `json:"query"`
			MaxResults int    `json:"max_results"`
		}
		if err := decodeInput(WebSearchName, input, &in); err != nil {
			return Result{}, err
		}
		if s == nil {
			return Result{}, toolErr(WebSearchName, nil, "web search is not configured on this host; do without it (read the code and docs in the sandbox) or ask the user")
		}
		rs, err := s.Search(ctx, in.Query, cmpOr(in.MaxResults, 5))
		if err != nil {
			if ctx.Err() != nil {
				return Result{}, ctx.Err()
			}
			return Result{}, toolErr(WebSearchName, err, "search failed: %v", err)
		}
		if len(rs) == 0 {
			return Result{Content: "no results for " + fmt.Sprintf("%q", in.Query)}, nil
		}
		var b strings.Builder
		for i, r := range rs {
			fmt.Fprintf(&b, "%d. %s\n   %s\n   %s\n", i+1, r.Title, r.URL, r.Snippet)
		}
		return Result{Content: b.String()}, nil
	})
}
