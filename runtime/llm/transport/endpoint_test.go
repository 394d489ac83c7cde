package transport

import "testing"

func TestEndpoint(t *testing.T) {
	for _, c := range []struct{ base, path, query, want string }{
		{"http://h/v1", "/chat/completions", "", "http://h/v1/chat/completions"},
		{"http://h/v1/", "/chat/completions", "", "http://h/v1/chat/completions"},
		{"http://h/v1?token=X", "/chat/completions", "", "http://h/v1/chat/completions?token=X"},
		{"http://h/v1/?token=X#frag", "/messages", "", "http://h/v1/messages?token=X"},
		{"http://h/v1beta", "/models/m:streamGenerateContent", "alt=sse", "http://h/v1beta/models/m:streamGenerateContent?alt=sse"},
		{"http://h/v1beta?key=K&x=1", "/models/m:streamGenerateContent", "alt=sse", "http://h/v1beta/models/m:streamGenerateContent?key=K&x=1&alt=sse"},
	} {
		if got := Endpoint(c.base, c.path, c.query); got != c.want {
			t.Errorf("Endpoint(%q, %q, %q) = %q, want %q", c.base, c.path, c.query, got, c.want)
		}
	}
}
